"""A Volcano PodGroup as a native ``Workload`` and ``PodGroup`` (``scheduling.k8s.io/v1beta1``).

- ``workload(pg)``: one ``podGroupTemplate`` named :data:`TEMPLATE`; ``schedulingPolicy`` is
  ``gang: {minCount: minMember}`` for a gang (``minMember`` ≥ 2) and ``basic`` otherwise (a
  Spark driver, ``minMember`` 1, is schedulable alone, as on the Volcano path);
  ``disruptionMode: all`` for a gang (preempted whole), the PodGroup's PriorityClass, and
  ``controllerRef`` naming the job that owns the PodGroup.
- ``podgroup(pg)``: the runtime group that pods join, ``workloadRef`` to that template, the same
  policy, disruption mode and priority (kube-scheduler reads them from the PodGroup).
- A group in stages (``keys.STAGES``, ``bridge.staging``: a JobSet's) gets one template per
  stage instead, ``stage-1`` … (a Workload holds at most :data:`MOST_TEMPLATES`; stages past
  that share the last one), each a gang of that stage's pods, and one native PodGroup per
  stage: the first named as the Volcano PodGroup, the others ``<name>-stage-<n>``
  (``stage_group``). ``podgroups(pg)`` lists them all, ``podgroup(pg)`` is the first; a stage's
  pods join their own (``stage_of``), so kube-scheduler places each stage all or nothing when
  its pods exist, as our scheduler does.
- ``stamp(pod_spec, name)``: the pod spec with ``schedulingGroup.podGroupName`` (immutable once
  the pod exists, so it is set at admission).

Names and namespace are the Volcano PodGroup's; owner references are copied, so the native
objects go with the job as the Volcano PodGroup does.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from bridge import keys, staging

__all__ = [
    "API",
    "MOST_TEMPLATES",
    "TEMPLATE",
    "podgroup",
    "podgroups",
    "policy",
    "stage_group",
    "stage_of",
    "stamp",
    "workload",
]

API = "scheduling.k8s.io/v1beta1"
TEMPLATE = "gang"
MOST_TEMPLATES = 8  # podGroupTemplates a Workload may hold


def stage_group(name: str, index: int) -> str:
    """The native PodGroup of stage ``index`` (0: the first) of Volcano PodGroup ``name``."""
    return name if index == 0 else f"{name}-stage-{min(index, MOST_TEMPLATES - 1) + 1}"


def stage_of(stages: Sequence[Iterable[str]], task: str) -> int:
    """The stage (each given by its task names) whose native PodGroup the pods of ``task`` join:
    the first that brings any (a task two stages share, exclusive placement's leaders then
    followers, joins the first); 0 for a task no stage names."""
    return next((i for i, tasks in enumerate(stages) if task in tasks), 0)


def _stages(pg: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(template, native group, minMember) per native group of ``pg``."""
    meta, spec = pg["metadata"], pg.get("spec") or {}
    stages = staging.decode((meta.get("annotations") or {}).get(keys.STAGES))
    if len(stages) < 2:
        return [(TEMPLATE, meta["name"], int(spec.get("minMember") or 1))]
    counts: list[int] = []
    for i, stage in enumerate(stages):
        if i < MOST_TEMPLATES:
            counts.append(stage.pods)
        else:
            counts[-1] += stage.pods
    return [(f"stage-{i + 1}", stage_group(meta["name"], i), n) for i, n in enumerate(counts)]


def policy(min_member: int) -> dict[str, Any]:
    """The native scheduling policy for a group of ``min_member``."""
    return {"gang": {"minCount": min_member}} if min_member >= 2 else {"basic": {}}


def _meta(pg: dict[str, Any]) -> dict[str, Any]:
    src = pg["metadata"]
    meta: dict[str, Any] = {"name": src["name"], "namespace": src["namespace"]}
    if src.get("ownerReferences"):
        meta["ownerReferences"] = copy.deepcopy(src["ownerReferences"])
    if src.get("labels"):
        meta["labels"] = dict(src["labels"])
    return meta


def _common(pg: dict[str, Any], min_member: int) -> dict[str, Any]:
    spec = pg.get("spec") or {}
    out: dict[str, Any] = {"schedulingPolicy": policy(min_member)}
    if min_member >= 2:
        out["disruptionMode"] = {"all": {}}
    if spec.get("priorityClassName"):
        out["priorityClassName"] = spec["priorityClassName"]
    return out


def workload(pg: dict[str, Any]) -> dict[str, Any]:
    templates = [{"name": template, **_common(pg, n)} for template, _, n in _stages(pg)]
    spec: dict[str, Any] = {"podGroupTemplates": templates}
    owner = next((o for o in pg["metadata"].get("ownerReferences") or [] if o.get("controller")), None)
    if owner is not None:
        group = owner["apiVersion"].rpartition("/")[0]
        spec["controllerRef"] = {"apiGroup": group, "kind": owner["kind"], "name": owner["name"]}
    return {"apiVersion": API, "kind": "Workload", "metadata": _meta(pg), "spec": spec}


def podgroups(pg: dict[str, Any]) -> list[dict[str, Any]]:
    """The native PodGroups of ``pg``: one, or one per stage (the first stage's first)."""
    out = []
    for template, name, n in _stages(pg):
        ref = {"workloadName": pg["metadata"]["name"], "templateName": template}
        meta = {**_meta(pg), "name": name}
        out.append(
            {"apiVersion": API, "kind": "PodGroup", "metadata": meta, "spec": {"workloadRef": ref, **_common(pg, n)}}
        )
    return out


def podgroup(pg: dict[str, Any]) -> dict[str, Any]:
    """The native PodGroup named as ``pg`` (its first stage's, when it has stages)."""
    return podgroups(pg)[0]


def stamp(pod_spec: dict[str, Any], name: str) -> dict[str, Any]:
    return {**pod_spec, "schedulingGroup": {"podGroupName": name}}
