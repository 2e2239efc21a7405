"""The stamp a job kind's pod template gets, so its pods join their group on our scheduler. Pure.

``template(template, group, ctx, task=...)``: the template with the group annotation
(``scheduling.k8s.io/group-name``) and, when given, the task (``volcano.sh/task-spec``), and our
scheduler. On the Volcano backend it is labelled ``vbridge.io/grouped`` too, so the pod webhook
is not called for its pods. On the native backend it carries the native group and the queue
gate instead (``bridge.native.pods``), and no label: an operator built on an older
``k8s.io/api`` drops ``schedulingGroup`` when it copies the template, so the pod webhook
completes its pods. ``native_group`` names the native PodGroup its pods join when it is not the
group's own (a later stage's): it is also written as the annotation ``keys.NATIVE_GROUP``, for
the pod webhook. A template that names another scheduler keeps it (theirs wins) and gets only
the annotations and label.
"""

from __future__ import annotations

from typing import Any

from bridge import keys
from bridge.adapters import base
from bridge.native import pods as native_pods

__all__ = ["template"]


def template(
    given: Any, group: str, ctx: base.Context, *, task: str | None = None, native_group: str | None = None
) -> dict[str, Any]:
    """``given`` (a pod template; anything else reads as an empty one), stamped."""
    given = given if isinstance(given, dict) else {}
    meta, spec = given.get("metadata"), given.get("spec")
    meta = meta if isinstance(meta, dict) else {}
    spec = spec if isinstance(spec, dict) else {}
    annotations = {**(meta.get("annotations") or {}), keys.GROUP_NAME: group}
    if task is not None:
        annotations[keys.TASK_SPEC] = task
    if ctx.native and native_group not in (None, group):
        annotations[keys.NATIVE_GROUP] = native_group
    stamped_meta = dict(meta)
    if not ctx.native:  # so the pod webhook skips its pods
        stamped_meta["labels"] = {**(meta.get("labels") or {}), keys.GROUPED_LABEL: "true"}
    out = {**given, "metadata": {**stamped_meta, "annotations": annotations}}
    if spec.get("schedulerName") not in (
        None,
        "",
        "default-scheduler",
        *((ctx.scheduler_name,) if ctx.native else ()),
    ):
        return out  # the user chose a scheduler: theirs wins
    if ctx.native:
        out["spec"] = native_pods.stamp(spec, native_group or group, ours=ctx.scheduler_name)
    else:
        out["spec"] = {**spec, "schedulerName": ctx.scheduler_name}
    return out
