"""Queue ``scheduling.volcano.sh/v1beta1`` (cluster-scoped): validated, never changed."""

from __future__ import annotations

from typing import Any

from bridge.adapters import base, shapes
from bridge.models import queue as queue_model

__all__ = ["QueueAdapter"]


class QueueAdapter:
    registration = base.Registration(
        name="scheduling.volcano.sh/queue",
        group="scheduling.volcano.sh",
        versions=("v1beta1",),
        kind="Queue",
        plural="queues",
        failure_policy="Ignore",
        why="queues are the administrators' (and the scheduler makes the default ones at start, maybe before "
        "the webhook runs); the scheduler holds the groups of an unsound queue instead",
        operations=("CREATE", "UPDATE"),
        scope="Cluster",
        shape=shapes.Queue,
        reads=True,  # a parent made a moment ago is read from the apiserver before it counts as missing
    )

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        """None: admitted unchanged. Raises for an unsound spec, a parent that is itself or missing."""
        name = str((obj.get("metadata") or {}).get("name") or "")
        queue_model.check(name, obj.get("spec"), known=ctx.queues)
        return None

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        return None

    def finished(self, obj: dict[str, Any]) -> bool:
        return False  # not reconciled

    def queue_of(self, obj: dict[str, Any], ctx: base.Context) -> str | None:
        return None  # a Queue is not in a queue
