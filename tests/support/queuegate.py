"""Until the scheduler's queue-gate mode exists: lift ``keys.QUEUE_GATE`` from pods ourselves.

On the native backend every grouped pod is admitted with the gate; kube-scheduler places it
only once it is gone. ``lift(api, namespace)`` removes it from every pod of ``namespace`` that
carries it (a JSON Patch diff of the gates, other gates kept) and returns the pods it lifted;
tests call it with ``apiserver.eventually`` until the pods they expect were lifted.
"""

from __future__ import annotations

from kubernetes import client as k8s

from bridge import keys, patching

__all__ = ["lift"]


def lift(api: k8s.ApiClient, namespace: str) -> list[str]:
    core = k8s.CoreV1Api(api)
    lifted = []
    for pod in core.list_namespaced_pod(namespace).items:
        gates = [g.name for g in pod.spec.scheduling_gates or []]
        if keys.QUEUE_GATE not in gates:
            continue
        before = {"spec": {"schedulingGates": [{"name": g} for g in gates]}}
        kept = [{"name": g} for g in gates if g != keys.QUEUE_GATE]
        after = {"spec": {"schedulingGates": kept}} if kept else {"spec": {}}
        ops = patching.diff(before, after)
        core.patch_namespaced_pod(pod.metadata.name, namespace, ops)
        lifted.append(pod.metadata.name)
    return lifted
