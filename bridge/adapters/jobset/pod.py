"""Pods of JobSets on the native backend, completed with the native group they join.

A JobSet's templates are stamped at admission (``adapter``), ``spec.schedulingGroup`` included
on the native backend. The JobSet controller copies each template into a batch Job through its
own ``k8s.io/api``: v0.12 (k8s.io/api v0.36) keeps the field, but a controller built on an older
one drops it, and the pods come without it (the apiserver then skips this webhook for every pod
that kept it: ``webhooks.configuration``'s native condition). A pod of a stamped template still
carries the group annotation, and, for a later stage's
template, ``keys.NATIVE_GROUP``: it gets the native stamp (``bridge.native.pods``) for that
group at admission, the only time it can be set. On the Volcano backend there is nothing to
complete (the pod's template carried everything), and a pod of a JobSet made before the bridge
(no group annotation) is not ours.

Every pod sent here has its quantities held to what apimachinery keeps as written
(``bridge.validation.pod_spec``), completed or not.
"""

from __future__ import annotations

from typing import Any

from bridge import keys, patching, validation
from bridge.adapters import base
from bridge.native import pods as native_pods

__all__ = ["JOBSET_NAME", "JobSetPodAdapter"]

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"  # the label the JobSet controller puts on its pods


class JobSetPodAdapter(base.PodAdapter):
    registration = base.pod_registration(
        "jobset.x-k8s.io/pod",
        why="stamped JobSet templates already carry the same result",
        object_selector=(JOBSET_NAME,),
        done_when=base.HAS_GROUP,
    )

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        validation.pod_spec(obj.get("spec"), "spec")
        if not ctx.native:
            return None
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        annotations = meta.get("annotations") or {}
        group = annotations.get(keys.GROUP_NAME)
        if not group or native_pods.stamped(spec):
            return None
        if spec.get("schedulerName") not in (None, "", "default-scheduler", ctx.scheduler_name):
            return None  # the user chose another scheduler on purpose
        joined = native_pods.stamp(spec, annotations.get(keys.NATIVE_GROUP) or group, ours=ctx.scheduler_name)
        return base.Admission(desired=patching.assoc(obj, ("spec",), joined))
