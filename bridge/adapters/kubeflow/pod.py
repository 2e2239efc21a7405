"""Pods of Kubeflow jobs that arrive without our stamps.

A job created before the bridge was installed, or an operator that rewrites templates, makes
pods that lack the group annotation. They are recognised by the operators' labels
(``training.kubeflow.org/job-name`` plus ``replica-type`` or ``job-role``) and given the same
result as a stamped template: schedulerName, ``scheduling.k8s.io/group-name: <job>`` and
``volcano.sh/task-spec: <role>``. The job's PodGroup is made by the reconciler from the job.
"""

from __future__ import annotations

from typing import Any

from bridge import keys, patching
from bridge.adapters import base, podview

__all__ = ["KubeflowPodAdapter"]


class KubeflowPodAdapter:
    registration = base.Registration(
        name="kubeflow.org/pod",
        group="",
        versions=("v1",),
        kind="Pod",
        plural="pods",
        failure_policy="Ignore",
        why="pods are everyone's: a bridge outage must never block pod creation cluster-wide; "
        "stamped job templates already carry the same result",
        object_selector=(keys.KF_JOB_NAME,),
        done_when=f"has(object.metadata.annotations) && '{keys.GROUP_NAME}' in object.metadata.annotations",
        view=podview.Pod,
    )

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        labels = meta.get("labels") or {}
        job = labels.get(keys.KF_JOB_NAME)
        role = labels.get(keys.KF_REPLICA_TYPE) or labels.get("training.kubeflow.org/job-role")
        annotations = meta.get("annotations") or {}
        if not job or not role or keys.GROUP_NAME in annotations:
            return None
        if spec.get("schedulerName") not in (None, "", "default-scheduler", ctx.scheduler_name):
            return None  # the user chose another scheduler on purpose
        stamps = {**annotations, keys.GROUP_NAME: job, keys.TASK_SPEC: role.lower()}
        desired = patching.assoc(obj, ("metadata", "annotations"), stamps)
        desired = patching.assoc(desired, ("spec", "schedulerName"), ctx.scheduler_name)
        return base.Admission(desired=desired)

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        """None: the job's PodGroup is made from the job, by the job reconciler."""
        return None

    def finished(self, obj: dict[str, Any]) -> bool:
        return False  # not reconciled (``registration.generic_reconciler`` is False)
