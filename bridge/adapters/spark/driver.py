"""spark-submit pods after admission: the pure decisions of ``vbridge.controllers.spark``.

- which pods need work: a driver still behind our gate, a client-mode executor whose group is
  ours to make (``gated_driver``, ``ungrouped_executor``);
- a gated driver's desired PodGroup from its conf (``spark.properties``) and the chosen template
  (``podgroup``): the template's fields as the user set them, with what it left out filled in
  (minMember 1, minResources = this driver's requests + N executors by Spark's rules, queue by
  precedence). ``None`` when the group is named by someone else (Spark's VolcanoFeatureStep, the
  spark-operator): the driver then waits until that group exists;
- the driver with its gate lifted (``without_gate``);
- a client-mode executor's group (``executor_podgroup``) and whether an existing group leaves it
  to us (``executor_may_make``);
- the pod condition ``vbridge.io/PodGroupReady`` (``with_condition``): a driver that cannot get
  its group (a malformed conf, a refused queue) says so on itself, as False with the reason and
  message, beside a Warning Event, rather than staying gated in silence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import keys, patching, podgroups, podresources, queues
from bridge.adapters import base
from bridge.adapters.spark import conf as sparkconf
from bridge.adapters.spark import pod as spark_pod
from bridge.adapters.spark import sizing

__all__ = [
    "CONDITION",
    "executor_may_make",
    "executor_podgroup",
    "gated_driver",
    "group_is_ours",
    "made_by_others",
    "podgroup",
    "ungrouped_executor",
    "with_condition",
    "without_gate",
]

CONDITION = "vbridge.io/PodGroupReady"  # a pod condition of ours, written through pods/status


def _annotations(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("annotations") or {}


def gated_driver(pod: Mapping[str, Any]) -> bool:
    gates = [g.get("name") for g in (pod.get("spec") or {}).get("schedulingGates") or []]
    return sparkconf.role(pod) == "driver" and keys.SPARK_GATE in gates


def ungrouped_executor(pod: Mapping[str, Any]) -> bool:
    """An executor in a group named as we name it, not going (it must not (re)make a group)."""
    return (
        sparkconf.role(pod) == "executor"
        and not (pod.get("metadata") or {}).get("deletionTimestamp")
        and _annotations(pod).get(keys.GROUP_NAME) == spark_pod.group_name(sparkconf.app_id(pod))
    )


def made_by_others(group: Mapping[str, Any]) -> bool:
    """Made by Spark, the operator or a user's template, not by us."""
    return keys.MANAGED_BY not in ((group.get("metadata") or {}).get("labels") or {})


def group_is_ours(pod: Mapping[str, Any]) -> bool:
    """Whether the driver's group is the one spark-submit's own (``spark-<app id>-podgroup``) that we
    make, rather than one an operator makes (the driver then only waits for it)."""
    return _annotations(pod).get(keys.GROUP_NAME) == spark_pod.group_name(sparkconf.app_id(pod))


def podgroup(
    pod: Mapping[str, Any], ctx: base.Context, *, conf: Mapping[str, str], template: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """A gated driver's desired group; raises InvalidObjectError for a conf Spark would refuse."""
    if not group_is_ours(pod):
        return None
    name = _annotations(pod)[keys.GROUP_NAME]
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    template = dict(template or {})
    tmeta, tspec = dict(template.get("metadata") or {}), dict(template.get("spec") or {})
    driver = podresources.pod_requests(spec, what="driver")
    executors = [sizing.requests(s) for s in sizing.executors_from_conf(conf)]
    queue = ctx.queue(field=tspec.get("queue"), annotations=meta.get("annotations"))
    group = podgroups.build(
        name=name,
        namespace=meta.get("namespace") or ctx.namespace,
        min_member=tspec.get("minMember", 1),
        queue=queue,
        min_resources=tspec.get("minResources") or podresources.total([driver, *executors]),
        min_task_member=tspec.get("minTaskMember"),
        priority_class=tspec.get("priorityClassName") or spec.get("priorityClassName"),
        labels=tmeta.get("labels"),
    )
    extra = {k: v for k, v in tspec.items() if k not in group["spec"]}
    group["spec"].update(extra)  # networkTopology, subGroupPolicy, …: passed through as Spark does
    if tmeta.get("annotations"):
        group["metadata"]["annotations"] = dict(tmeta["annotations"])
    return group


def without_gate(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod without our scheduling gate: other gates kept, the field gone when none is left."""
    gates = [g for g in (pod.get("spec") or {}).get("schedulingGates") or [] if g.get("name") != keys.SPARK_GATE]
    if gates:
        return patching.assoc(pod, ("spec", "schedulingGates"), gates)
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k != "schedulingGates"}
    return patching.assoc(pod, ("spec",), spec)


def executor_podgroup(pod: Mapping[str, Any], ctx: base.Context) -> dict[str, Any]:
    """Client mode: no driver pod made the group. Every executor is a (non-controller) owner, so
    the group lives while any executor does."""
    meta = pod.get("metadata") or {}
    queue = queues.resolve(
        field=None, job_annotations=meta.get("annotations"), namespace_annotations=ctx.namespace_annotations
    )
    group = podgroups.build(
        name=_annotations(pod)[keys.GROUP_NAME],
        namespace=meta.get("namespace") or ctx.namespace,
        min_member=1,
        queue=queue,
        priority_class=(pod.get("spec") or {}).get("priorityClassName"),
    )
    group["metadata"]["ownerReferences"] = [
        {**podgroups.owner_ref(pod), "controller": False, "blockOwnerDeletion": False}
    ]
    return group


def executor_may_make(existing: Mapping[str, Any] | None) -> bool:
    """False when Spark or a driver made the group, or a driver owns it (cluster mode)."""
    if existing is None:
        return True
    owners = (existing.get("metadata") or {}).get("ownerReferences") or []
    return not made_by_others(existing) and not any(r.get("kind") == "Pod" and r.get("controller") for r in owners)


def with_condition(
    pod: Mapping[str, Any], *, ready: bool, reason: str, message: str, now: str
) -> dict[str, Any] | None:
    """The pod with ``CONDITION`` set; None when it already says so (only the time would change)."""
    conditions = list((pod.get("status") or {}).get("conditions") or [])
    status = "True" if ready else "False"
    mine = next((c for c in conditions if c.get("type") == CONDITION), None)
    if mine is not None and (mine.get("status"), mine.get("reason"), mine.get("message")) == (status, reason, message):
        return None
    condition = {
        "type": CONDITION,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": now if mine is None or mine.get("status") != status else mine.get("lastTransitionTime"),
    }
    others = [c for c in conditions if c.get("type") != CONDITION]
    return patching.assoc(pod, ("status", "conditions"), [*others, condition])
