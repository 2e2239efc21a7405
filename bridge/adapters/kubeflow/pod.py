"""Pods of Kubeflow jobs that arrive without our stamps.

A job created before the bridge was installed, or an operator that rewrites templates, makes
pods that lack the group annotation. They are recognised by the operators' labels
(``training.kubeflow.org/job-name`` plus ``replica-type`` or ``job-role``) and given the same
result as a stamped template: schedulerName, ``scheduling.k8s.io/group-name: <job>`` and
``volcano.sh/task-spec: <role>``. The job's PodGroup is made by the reconciler from the job.

On the native backend a pod of a stamped template comes here too (templates carry no
``vbridge.io/grouped`` label there): an operator built on an older ``k8s.io/api`` drops
``spec.schedulingGroup`` when it copies the template, so every grouped pod without it gets the
native stamp (``bridge.native.pods``) at admission, the only time it can be set.

Every pod sent here has its quantities held to what apimachinery keeps as written
(``bridge.validation.pod_spec``), stamped or not.
"""

from __future__ import annotations

from typing import Any

from bridge import keys, patching, validation
from bridge.adapters import base
from bridge.native import pods as native_pods

__all__ = ["KubeflowPodAdapter"]


class KubeflowPodAdapter(base.PodAdapter):
    registration = base.pod_registration(
        "kubeflow.org/pod",
        why="stamped job templates already carry the same result",
        object_selector=(keys.KF_JOB_NAME,),
        done_when=base.HAS_GROUP,
    )

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        validation.pod_spec(obj.get("spec"), "spec")
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        labels = meta.get("labels") or {}
        job = labels.get(keys.KF_JOB_NAME)
        role = labels.get(keys.KF_REPLICA_TYPE) or labels.get("training.kubeflow.org/job-role")
        annotations = meta.get("annotations") or {}
        if not job or not role:
            return None
        if keys.GROUP_NAME in annotations and (not ctx.native or native_pods.stamped(spec)):
            return None
        if spec.get("schedulerName") not in (None, "", "default-scheduler", ctx.scheduler_name):
            return None  # the user chose another scheduler on purpose
        stamps = {keys.GROUP_NAME: job, keys.TASK_SPEC: role.lower(), **annotations}
        desired = patching.assoc(obj, ("metadata", "annotations"), stamps)
        if ctx.native:
            group = stamps[keys.GROUP_NAME]
            return base.Admission(
                desired=patching.assoc(desired, ("spec",), native_pods.stamp(spec, group, ours=ctx.scheduler_name))
            )
        desired = patching.assoc(desired, ("spec", "schedulerName"), ctx.scheduler_name)
        return base.Admission(desired=desired)
