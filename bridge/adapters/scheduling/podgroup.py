"""PodGroup ``scheduling.volcano.sh/v1beta1`` made directly: validated and its queue checked, never changed."""

from __future__ import annotations

from typing import Any

from bridge import defaults, errors, validation
from bridge.adapters import base, shapes

__all__ = ["PodGroupAdapter"]


class PodGroupAdapter:
    registration = base.Registration(
        name="scheduling.volcano.sh/podgroup",
        group="scheduling.volcano.sh",
        versions=("v1beta1",),
        kind="PodGroup",
        plural="podgroups",
        failure_policy="Ignore",
        why="the scheduler never schedules a group that is unsound or in a queue its namespace may not use, "
        "so a bridge outage must not stop operators and reconcilers from making groups",
        operations=("CREATE", "UPDATE"),
        shape=shapes.PodGroup,
    )

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        """None: admitted unchanged. Raises for an unsound spec or a queue that refuses the namespace."""
        spec = obj.get("spec") or {}
        validation.podgroup_spec(spec)
        queue = self.queue_of(obj, ctx)
        if queue != ctx.admitted_queue:
            refused = ctx.refusal(queue)
            if refused is not None:
                raise errors.QueueError(refused)
        return None

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        return None  # it is the group

    def finished(self, obj: dict[str, Any]) -> bool:
        return False  # not reconciled (``registration.generic_reconciler`` is False)

    def queue_of(self, obj: dict[str, Any], ctx: base.Context) -> str:
        queue = (obj.get("spec") or {}).get("queue")
        return queue if isinstance(queue, str) and queue else defaults.DEFAULT_QUEUE
