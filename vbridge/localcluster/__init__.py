"""A local Kubernetes control plane on loopback, built from Go modules.

``binaries`` finds (and on first use builds, through ``tools/build-binaries.sh``) etcd,
kube-apiserver, kube-controller-manager, kube-scheduler and kubectl. ``certs`` makes the
throwaway PKI. ``processes`` runs a child so it can never outlive us. ``cluster`` puts them
together: :class:`vbridge.localcluster.cluster.LocalCluster` starts etcd, the apiserver with
envtest's flags plus RBAC and service-account keys, and the controller manager (garbage
collector, Job, namespace and service-account controllers; node lifecycle and cloud
controllers off), installs our CRDs, the ``default`` queue and the policy that lets only us lift
our scheduling gates (``bridge.gates``, as the chart does), and writes a kubeconfig.

``depcrds`` fetches the CRDs of the upstream operators from their pinned Go modules;
``operators`` runs spark-operator, training-operator and mpi-operator out of cluster against a
``LocalCluster``, with what a pod would give them (``trainingwebhook``: the training-operator's
Secret, Service and webhook configuration). ``volcano`` runs Volcano's own vc-scheduler and
vc-controller-manager (built by ``tools/build-volcano.sh``) with Volcano's CRDs, what the chart's
``volcano.external=true`` mode is installed beside. ``kubescheduler`` runs the built
kube-scheduler for pods of ``default-scheduler`` (``vbridge up --backend native``, the chart's
own pods in the tests). ``probes`` asks loopback HTTP endpoints whether
they are ready (standard library, no proxy).

Errors are :class:`bridge.errors.ControlPlaneError` subclasses with the component's last log lines.
"""

__all__ = [
    "binaries",
    "certs",
    "cluster",
    "depcrds",
    "kubescheduler",
    "operators",
    "probes",
    "processes",
    "trainingwebhook",
    "volcano",
]
