"""volcano-bridge: Volcano gang scheduling for unchanged Spark and Kubeflow workloads.

Contract of the package tree:

- ``bridge.models``: pydantic models of the Volcano objects we own (PodGroup, Queue). Pure data.
- ``bridge.crdgen``: turns those models into CRD manifests. Pure.
- ``bridge.errors``: the one error hierarchy of the project.
- ``bridge.k8s``: the only place that talks HTTP to a kube-apiserver.
- ``bridge.localcluster``: a local control plane (etcd, kube-apiserver, kube-controller-manager)
  built from Go modules and run on loopback.
- ``bridge.nodesim``: simulated nodes, standing in for kubelets.
- ``bridge.cli``: the ``vbridge`` command.
"""

__all__: list[str] = []
