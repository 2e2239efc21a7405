"""Stamping an operator's pod template so its pods join their group: what the Kubeflow and
JobSet adapters share. Pure.

``template(template, group=, task=, ctx=)`` returns the pod template with the annotations
``scheduling.k8s.io/group-name`` and ``volcano.sh/task-spec`` and our scheduler; on the volcano
backend it is also labelled ``vbridge.io/grouped`` (the pod webhook then skips its pods); on the
native backend it gets the native group and the queue gate (``bridge.native.pods``) and no
label: an operator built on an older ``k8s.io/api`` drops ``schedulingGroup`` when it copies the
template, so the pod webhook completes its pods. A scheduler the user chose is kept.
"""

from __future__ import annotations

from typing import Any

from bridge import keys
from bridge.adapters import base
from bridge.native import pods as native_pods

__all__ = ["template"]


def template(template: Any, *, group: str, task: str, ctx: base.Context) -> dict[str, Any]:
    template = template if isinstance(template, dict) else {}
    meta, spec = template.get("metadata"), template.get("spec")
    meta = meta if isinstance(meta, dict) else {}
    spec = spec if isinstance(spec, dict) else {}
    annotations = {**(meta.get("annotations") or {}), keys.GROUP_NAME: group, keys.TASK_SPEC: task}
    stamped_meta = dict(meta)
    if not ctx.native:  # so the pod webhook skips its pods
        stamped_meta["labels"] = {**(meta.get("labels") or {}), keys.GROUPED_LABEL: "true"}
    out = {**template, "metadata": {**stamped_meta, "annotations": annotations}}
    if spec.get("schedulerName") not in (
        None,
        "",
        "default-scheduler",
        *((ctx.scheduler_name,) if ctx.native else ()),
    ):
        return out  # the user chose a scheduler: theirs wins
    if ctx.native:
        out["spec"] = native_pods.stamp(spec, group, ours=ctx.scheduler_name)
    else:
        out["spec"] = {**spec, "schedulerName": ctx.scheduler_name}
    return out
