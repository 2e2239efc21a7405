"""Offline translation for ``vbridge translate``: what the bridge would do to a manifest. Pure.

The manifest is converted to today's API, admitted (``adapter.admit``) and its PodGroup built
from the admitted object (``adapter.podgroup``), as admission and the reconciler would. Offline
there are no queues to consult: the context says so with ``queues=None``, so the queue is
resolved but not checked.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bridge import convert, defaults, errors, patching
from bridge.adapters import base, registry

__all__ = ["Outcome", "translate"]


@dataclasses.dataclass(frozen=True)
class Outcome:
    source: str  # "apiVersion kind name"
    converted: dict[str, Any] | None  # the object in today's API, when it was an old one
    desired: dict[str, Any] | None  # the object as admitted (None: not ours, unchanged)
    podgroup: dict[str, Any] | None
    patch: list[dict[str, Any]]
    notes: tuple[str, ...]
    error: str | None = None


def translate(
    obj: dict[str, Any],
    *,
    namespace_labels: dict[str, str] | None = None,
    scheduler_name: str = defaults.SCHEDULER_NAME,
) -> Outcome:
    meta = obj.get("metadata") or {}
    source = f"{obj.get('apiVersion')} {obj.get('kind')} {meta.get('name', '?')}"
    try:
        current, notes = convert.to_current(obj)
    except errors.InvalidObjectError as exc:
        return Outcome(source, None, None, None, [], (), error=str(exc))
    ctx = base.Context(
        namespace=meta.get("namespace") or "default",
        namespace_labels=namespace_labels or {},
        scheduler_name=scheduler_name,
        queues=None,
    )
    converted = current if current is not obj else None
    adapters = registry.for_object(current)
    if not adapters:
        note = f"volcano-bridge does not handle {current.get('apiVersion')} {current.get('kind')}"
        return Outcome(source, converted, None, None, [], (*notes, note))
    for adapter in adapters:
        try:
            admitted = adapter.admit(current, ctx)
            group = adapter.podgroup(admitted.desired, ctx) if admitted is not None else None
        except errors.InvalidObjectError as exc:
            return Outcome(source, converted, None, None, [], tuple(notes), error=str(exc))
        if admitted is not None:
            return Outcome(
                source,
                converted,
                admitted.desired,
                group,
                patching.diff(current, admitted.desired),
                (*notes, *admitted.warnings),
            )
    return Outcome(source, converted, None, None, [], (*notes, "not for gang scheduling: admitted unchanged"))
