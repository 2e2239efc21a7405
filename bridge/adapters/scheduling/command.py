"""Command ``bus.volcano.sh/v1alpha1``: its author recorded on CREATE, held as made on UPDATE.

The Command controller (``vbridge.controllers.commands``) acts only for what the Command's
author may do (``bridge.bus``): admission writes who made it, from the request's userInfo, into
``vbridge.io/command-author``, overwriting whatever the request carried, and refuses an UPDATE
that changes that annotation, the action or the target. Registered ``Ignore``: a Command made
while the webhook is down has no author and the controller refuses it, so an outage costs a
Command, never authority.
"""

from __future__ import annotations

from typing import Any

from bridge import bus, keys, patching
from bridge.adapters import base, shapes

__all__ = ["CommandAdapter"]


class CommandAdapter:
    registration = base.Registration(
        name="bus.volcano.sh/command",
        group="bus.volcano.sh",
        versions=("v1alpha1",),
        kind="Command",
        plural="commands",
        failure_policy="Ignore",
        why="the controller refuses a Command without the author admission records, so an outage refuses "
        "Commands instead of blocking anything else",
        operations=("CREATE", "UPDATE"),
        shape=shapes.Command,
    )

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        """UPDATE: None (unchanged) or a denial; CREATE: the Command with its author recorded."""
        if ctx.previous is not None:
            bus.unchanged(ctx.previous, obj)
            return None
        meta = obj.get("metadata") or {}
        annotations = {**(meta.get("annotations") or {}), keys.COMMAND_AUTHOR: bus.record(ctx.user)}
        return base.Admission(desired=patching.assoc(obj, ("metadata", "annotations"), annotations))

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        return None

    def finished(self, obj: dict[str, Any]) -> bool:
        return False  # not reconciled here: vbridge.controllers.commands carries Commands out

    def queue_of(self, obj: dict[str, Any], ctx: base.Context) -> str | None:
        return None  # a Command is in no queue
