"""The pods of a Volcano Job: ``<job>-<task>-<index>`` from the task template. Pure."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from bridge import defaults, podgroups
from bridge.adapters.vcjob import names, plugins, spec
from bridge.native import pods as native_pods

__all__ = ["build", "desired_names"]


def desired_names(job: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(task, index) of every pod the job should have, in spec order."""
    return [(t.name, i) for t in spec.tasks(job) for i in range(t.replicas)]


def build(job: Mapping[str, Any], *, task: str, index: int, native: bool = False) -> dict[str, Any]:
    """One pod body: the task template, Volcano's keys, the gang's group, the plugins' changes.

    ``native`` (the native backend): the pod also joins the native PodGroup of the job's group
    and waits on its queue's gate, on kube-scheduler (``bridge.native.pods``; the job's
    ``schedulerName``, defaulted to ours, is the one replaced)."""
    meta, job_spec, status = job["metadata"], job["spec"], job.get("status") or {}
    the_task = next(t for t in spec.tasks(job) if t.name == task)
    template = copy.deepcopy(dict(the_task.template))
    tmeta = template.get("metadata") or {}
    pod_spec: dict[str, Any] = template.get("spec") or {}
    name = names.pod(meta["name"], task, index)
    queue = job_spec.get("queue") or "default"
    keys = {
        names.JOB_NAME: meta["name"],
        names.JOB_NAMESPACE: meta["namespace"],
        names.QUEUE_NAME: queue,
        names.TASK_SPEC: task,
        names.TASK_INDEX: str(index),
    }
    annotations = {
        **(tmeta.get("annotations") or {}),
        **keys,
        names.GROUP_NAME: names.podgroup(job),
        names.JOB_VERSION: str(status.get("version") or 0),
        names.JOB_RETRY_COUNT: str(status.get("retryCount") or 0),
    }
    if job_spec.get("schedulerName"):
        pod_spec["schedulerName"] = job_spec["schedulerName"]
    if job_spec.get("priorityClassName") and not pod_spec.get("priorityClassName"):
        pod_spec["priorityClassName"] = job_spec["priorityClassName"]
    for volume in job_spec.get("volumes") or []:
        claim = volume.get("volumeClaimName")
        if claim:  # claims the job itself should create (volumeClaim) are not supported yet
            vol_name = f"{meta['name']}-{claim}"[:63]
            pod_spec.setdefault("volumes", []).append({"name": vol_name, "persistentVolumeClaim": {"claimName": claim}})
            for c in pod_spec.get("containers") or []:
                c.setdefault("volumeMounts", []).append({"name": vol_name, "mountPath": volume["mountPath"]})
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": {**(tmeta.get("labels") or {}), **keys},
            "annotations": annotations,
            "ownerReferences": [podgroups.owner_ref({"apiVersion": names.API_VERSION, "kind": "Job", **job})],
        },
        "spec": pod_spec,
    }
    plugins.apply(job, pod, task=task, index=index)
    if native:
        ours = job_spec.get("schedulerName") or defaults.SCHEDULER_NAME
        pod["spec"] = native_pods.stamp(pod["spec"], names.podgroup(job), ours=ours)
    return pod
