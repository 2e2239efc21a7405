"""What the status writer sends, worked out from a verdict and the object as cached. Pure.

``podgroup_status`` and ``queue_status`` are the status bodies to merge-patch; ``pg_key`` and
``queue_key`` what of a status a write changes (compared to tell a no-op write); the writer is
``status.StatusWriter``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import keys
from scheduler.api import plan

__all__ = ["Obj", "conditions_key", "pg_key", "podgroup_status", "queue_key", "queue_status"]

Obj = dict[str, Any]


def conditions_key(conditions: Any) -> tuple[tuple[str, str, str, str], ...]:
    return tuple(
        (str(c.get("type")), str(c.get("status")), str(c.get("reason", "")), str(c.get("message", "")))
        for c in conditions or []
    )


def podgroup_status(verdict: plan.PodGroupVerdict, live: Mapping[str, Any], now: str) -> Obj:
    """The status to write; a condition that did not flip keeps its lastTransitionTime. The
    native reconciler's condition (``keys.NATIVE_SYNCED``) is not ours: it is kept as it is."""
    before = {(c.get("type"), c.get("status")): c.get("lastTransitionTime") for c in live.get("conditions") or []}
    return {
        "phase": verdict.phase,
        "conditions": [
            *(
                {
                    "type": c.type,
                    "status": c.status,
                    "reason": c.reason,
                    "message": c.message,
                    "lastTransitionTime": before.get((c.type, c.status)) or now,
                }
                for c in verdict.conditions
            ),
            *(c for c in live.get("conditions") or [] if c.get("type") == keys.NATIVE_SYNCED),
        ],
        "running": verdict.running,
        "succeeded": verdict.succeeded,
        "failed": verdict.failed,
    }


def pg_key(status: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        status.get("phase") or "Pending",
        conditions_key(status.get("conditions")),
        int(status.get("running") or 0),
        int(status.get("succeeded") or 0),
        int(status.get("failed") or 0),
    )


def queue_status(verdict: plan.QueueVerdict, live: Mapping[str, Any]) -> Obj:
    """Counts and allocation; resources the queue no longer holds are removed (null in a merge patch).

    The state is the controller's and vcctl's (open, close): ours only where the queue has none
    yet, and the step from Closing to Closed once drained. Any other verdict state was decided
    from a snapshot that may predate an open or close, so the live state is kept."""
    allocated: dict[str, str | None] = {name: None for name in live.get("allocated") or {}}
    allocated.update(verdict.allocated)
    current = live.get("state")
    drained = current == "Closing" and verdict.state == "Closed"
    return {
        "state": verdict.state if not current or drained else current,
        "pending": verdict.pending,
        "inqueue": verdict.inqueue,
        "running": verdict.running,
        "unknown": verdict.unknown,
        "completed": verdict.completed,
        "allocated": allocated,
    }


def queue_key(status: Mapping[str, Any]) -> tuple[Any, ...]:
    allocated = {k: str(v) for k, v in (status.get("allocated") or {}).items() if v is not None}
    counts = tuple(int(status.get(k) or 0) for k in ("pending", "inqueue", "running", "unknown", "completed"))
    return (status.get("state") or "", counts, tuple(sorted(allocated.items())))
