"""What a cycle evicts to make room for one PodGroup, as explain reports it. Pure.

``of(session, plan, podgroup)`` reads the evictions the preempting actions committed for the
group (``Diagnostics.evictions``, filled by preempt, reclaim, gangpreempt and gangreclaim as
they commit) and joins them with the plan's Evict operations, so what explain lists is exactly
what the scheduler evicts, no second opinion: per victim pod its job, node, the reason
(Preempted or Reclaimed) and why (surplus above minMember or the whole job; the priorities, or
the queue reclaimed from).
"""

from __future__ import annotations

import dataclasses

from scheduler.api import plan
from scheduler.framework import session

__all__ = ["Eviction", "of"]


@dataclasses.dataclass(frozen=True, slots=True)
class Eviction:
    pod: str
    podgroup: str  # the victim's
    node: str
    reason: str  # Preempted | Reclaimed
    why: str


def of(ssn: session.Session, outcome: plan.Plan, podgroup: str) -> tuple[Eviction, ...]:
    ops = {op.pod: op for op in outcome.operations if isinstance(op, plan.Evict)}
    out = []
    for pod, message in ssn.diagnostics.evictions.get(podgroup, ()):
        op = ops[pod]
        why = message.split(": ", 1)[1] if ": " in message else message
        out.append(Eviction(pod, ssn.task(pod).job, op.node, op.reason, why))
    return tuple(out)
