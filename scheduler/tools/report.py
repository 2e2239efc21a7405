"""An explanation (``tools.explain``) as the text and the JSON ``vbridge explain`` prints. Pure.

``render`` prints quantities as people read them ("cpu 40, memory 64Gi") and leaves out the
sections that have nothing to say (a running group gets its header, verdict and queue).

``to_json`` is the stable ``-o json`` form, one object per PodGroup; quantities are Kubernetes
quantity strings (``{"cpu": "40", "memory": "68719476736"}``), absent fields are ``null``::

    {"podgroup": "ns/name", "owner": {"kind": str, "name": str} | null,
     "phase": str, "next_phase": str,
     "state": "completed" | "never" | "no-pods" | "not-admitted" | "invalid" | "waiting" | "placed"
              | "running" | "no-queue",
     "verdict": str, "never": str | null,
     (native backend, when it has something to say: "side": "queue-gate" | "kube-scheduler" | "native-refused"
      | null,
      "native_condition": {"status": str, "reason": str, "message": str} | null)
     "condition": {"type": str, "reason": str, "message": str} | null,
     "pods": {"min_member": int, "exist": int, "ready": int, "pending": int, "bound_now": int,
              "creator": str | null},
     "shapes": [{"request": Q, "tasks": int, "feasible_nodes": int, "never": str | null,
                 "failures": [{"reason": str, "nodes": int}]}],
     "fit": {"nodes_total": int, "tasks": int, "needed": int, "nodes": [{"node": str, "tasks": int}],
             "free_up": Q},
     "queue": {"name": str, "exists": bool, "state": str, "weight": int, "deserved": Q,
               "allocated": Q, "share": float, "overused": bool,
               "levels": [{"name": str, "allocated": Q, "deserved": Q}], "limit": str | null},
     "enqueue": null | {"admitted": bool, "refused_by": str | null, "reason": str,
                        "min_resources": Q | null, "idle": Q, "reserved": Q,
                        "reservers": [{"podgroup": str, "resources": Q}], "shortfall": Q,
                        "capability": Q | null, "capability_shortfall": Q},
     "evictions": [{"pod": str, "podgroup": str, "node": str, "reason": str, "why": str}]}

Errors are ``{"error": str}`` (the command's, not this module's).
"""

from __future__ import annotations

from typing import Any

from scheduler.api import resources
from scheduler.tools import explain

__all__ = ["render", "to_json"]


def _q(value: resources.Resource | None) -> dict[str, str] | None:
    return None if value is None else resources.to_api(value)


def _native(exp: explain.Explanation) -> dict[str, Any]:
    if not exp.side and exp.native_condition is None:
        return {}
    condition = exp.native_condition
    return {
        "side": exp.side or None,
        "native_condition": dict(zip(("status", "reason", "message"), condition, strict=True)) if condition else None,
    }


def to_json(exp: explain.Explanation) -> dict[str, Any]:
    e = exp.enqueue
    q = exp.queue
    return {
        "podgroup": exp.podgroup,
        "owner": {"kind": exp.owner[0], "name": exp.owner[1]} if exp.owner else None,
        "phase": exp.phase,
        "next_phase": exp.next_phase,
        "state": exp.state,
        "verdict": exp.verdict,
        **_native(exp),
        "never": exp.never,
        "condition": (
            {"type": exp.condition.type, "reason": exp.condition.reason, "message": exp.condition.message}
            if exp.condition
            else None
        ),
        "pods": {
            "min_member": exp.min_member,
            "exist": exp.tasks,
            "ready": exp.ready,
            "pending": exp.pending,
            "bound_now": exp.bound_now,
            "creator": exp.creator,
        },
        "shapes": [
            {
                "request": _q(s.request),
                "tasks": s.tasks,
                "feasible_nodes": s.feasible_nodes,
                "never": s.never,
                "failures": [{"reason": r, "nodes": n} for r, n in s.failures],
            }
            for s in exp.shapes
        ],
        "fit": {
            "nodes_total": exp.nodes,
            "tasks": exp.fit,
            "needed": exp.needed,
            "nodes": [{"node": node, "tasks": n} for node, n in exp.fit_nodes],
            "free_up": _q(exp.free_up),
        },
        "queue": {
            "name": q.name,
            "exists": q.exists,
            "state": q.state,
            "weight": q.weight,
            "deserved": _q(q.deserved),
            "allocated": _q(q.allocated),
            "share": q.share,
            "overused": q.overused,
            "levels": [{"name": n, "allocated": _q(a), "deserved": _q(d)} for n, a, d in q.levels],
            "limit": q.limit,
        },
        "enqueue": None
        if e is None
        else {
            "admitted": e.admitted,
            "refused_by": e.refused_by,
            "reason": e.reason,
            "min_resources": _q(e.min_resources),
            "idle": _q(e.idle),
            "reserved": _q(e.promised),
            "reservers": [{"podgroup": k, "resources": _q(v)} for k, v in e.reservers],
            "shortfall": _q(e.shortfall),
            "capability": _q(e.capability),
            "capability_shortfall": _q(e.capability_shortfall),
        },
        "evictions": [
            {"pod": v.pod, "podgroup": v.podgroup, "node": v.node, "reason": v.reason, "why": v.why}
            for v in exp.evictions
        ],
    }


def render(exp: explain.Explanation) -> str:
    """The report ``vbridge explain`` prints for one group."""
    owner = f" (of {exp.owner[0]} {exp.owner[1]})" if exp.owner else ""
    lines = [
        f"PodGroup {exp.podgroup}{owner}: phase {exp.phase}, minMember {exp.min_member}, "
        f"{exp.tasks} pod(s): {exp.ready} ready, {exp.pending} pending",
        f"verdict: {exp.verdict}",
    ]
    if exp.side:
        lines.append(f"waits on: {exp.side}")
    if exp.condition is not None and exp.state not in ("never", "no-pods", "not-admitted"):
        lines.append(f"condition: {exp.condition.reason}: {exp.condition.message}")
    if exp.creator is not None and exp.state != "no-pods":
        lines.append(f"pods: {exp.tasks} of {exp.min_member} exist: {exp.creator}")
    if exp.shapes and exp.state not in ("running", "placed", "completed"):
        lines += ["", f"nodes ({exp.nodes}) for the pending pods:"]
        for shape in exp.shapes:
            lines.append(
                f"  {shape.tasks} pod(s) requesting {shape.request.human()}: {shape.feasible_nodes} node(s) fit one now"
            )
            if shape.never is not None:
                lines.append(f"    never: {shape.never}")
            lines += [f"    {n} {reason}" for reason, n in shape.failures]
        if exp.state == "waiting":
            where = ", ".join(f"{node}×{n}" for node, n in exp.fit_nodes) or "nowhere"
            lines += [
                "",
                f"best partial fit: {exp.fit} of {exp.pending} pending pod(s) fit now ({where}); needed {exp.needed}",
            ]
    if exp.evictions:
        lines += ["", f"to make room, the cycle evicts {len(exp.evictions)} pod(s):"]
        lines += [f"  {v.pod} (of {v.podgroup}, on {v.node}): {v.reason}: {v.why}" for v in exp.evictions]
    q = exp.queue
    lines += [
        "",
        f"queue {q.name} ({q.state}, weight {q.weight}): deserved {q.deserved.human()}; holds {q.allocated.human()}; "
        f"share {q.share:.2f}{' (overused)' if q.overused else ''}",
    ]
    if len(q.levels) > 1:
        lines.append(
            "  queue tree: " + " > ".join(f"{n} (holds {a.human()}; deserves {d.human()})" for n, a, d in q.levels)
        )
    if q.limit:
        lines.append(f"  held back: {q.limit}")
    e = exp.enqueue
    if e is not None and exp.state in ("not-admitted", "no-pods") and e.refused_by not in (None, "never"):
        minimum = e.min_resources.human() if e.min_resources is not None else "none"
        lines += ["", f"enqueue: refused by {e.refused_by}: minResources {minimum}"]
        if e.refused_by == "overcommit":
            lines += [
                f"  unreserved capacity (overcommitted idle): {e.idle.human()}",
                f"  reserved by admitted groups: {e.promised.human()}",
            ]
            lines += [f"    {group}: {amount.human()}" for group, amount in e.reservers]
            lines.append(f"  short by: {e.shortfall.human()}")
        elif e.refused_by == "proportion" and e.capability is not None:
            lines.append(f"  queue {q.name}'s real capability: {e.capability.human()}")
            lines.append(f"  beyond it by: {e.capability_shortfall.human()}")
    if exp.state == "waiting" and not exp.free_up.is_empty():
        lines += ["", f"to run, at least this must free up on fitting nodes: {exp.free_up.human()}"]
    return "\n".join(lines)
