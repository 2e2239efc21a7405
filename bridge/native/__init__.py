"""Kubernetes' own gang scheduling (the 1.37 Workload API) as a second backend: pure translation.

Contract: every function here takes our Volcano PodGroup (``scheduling.volcano.sh/v1beta1``, as
the adapters make it) or a pod template and returns the native objects: a ``Workload`` (the
template), its one runtime ``PodGroup`` (``scheduling.k8s.io/v1beta1``) and the pod's
``spec.schedulingGroup``. No client, clock or environment. The same rules that give a job its
``minMember`` give the native ``minCount``, so both backends gang the same pods.

``workloads``: a Volcano PodGroup as a ``Workload`` and its ``PodGroup``; ``pods``: a pod or
template as the native backend admits it (``stamp``: its ``schedulingGroup``, our queue gate,
kube-scheduler's name).
"""

__all__ = ["pods", "workloads"]
