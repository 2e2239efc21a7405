"""volcano-bridge: Volcano gang scheduling for unchanged Spark and Kubeflow workloads.

Contract of the package tree:

- ``bridge.models``: pydantic models of the Volcano objects we own (PodGroup, Queue). Pure data.
- ``bridge.crdgen``: turns those models into CRD manifests. Pure.
- ``bridge.errors``: the one error hierarchy of the project.
- ``bridge.inputs``: a user's files (and stdin) read within bounds, YAML with bounded aliases.
- ``bridge.k8s``: the only place that talks HTTP to a kube-apiserver.
- ``vbridge.localcluster``: a local control plane (etcd, kube-apiserver, kube-controller-manager)
  built from Go modules and run on loopback.
- ``vbridge.nodesim``: simulated nodes, standing in for kubelets.
- ``bridge.adapters``: one pure translation per workload kind, listed in ``registry``.
- ``bridge.spark``, ``bridge.queues``, ``bridge.podresources``, ``bridge.quantity``,
  ``bridge.convert``, ``bridge.patching``, ``bridge.podgroups``: pure rules and helpers;
  ``bridge.bus``: bus.volcano.sh Commands (what one asks) and the queue state machine;
  ``bridge.gates``: the ValidatingAdmissionPolicy that lets only us lift our scheduling gates.
- ``bridge.vcjob``: Volcano Jobs, pure (state machine, plugins, desired objects).
- ``vbridge.controllers``: the reconcilers (I/O).
- ``vbridge.runtime``: the composition root of webhook server and reconcilers;
  ``vbridge.embedded`` adds the local cluster, simulator and scheduler for ``vbridge up``.
- ``bridge.crdgen``, ``vbridge.chartgen``: generated CRDs and chart parts.
- ``vbridge.cli``: the ``vbridge`` command (``cli_serve``, ``cli_jobs``: its larger subcommands).
"""

__all__: list[str] = []
