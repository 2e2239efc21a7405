"""Cluster facts admission consults: namespaces, queues, priority classes, kept current by watches.

``View`` is the Protocol its readers (admission, the reconcilers) type against.
``run`` follows three watches; each event goes to an ``apply_*`` function (ADDED, MODIFIED or
DELETED and the object), which replaces whole maps so readers never see a half-applied change,
and drops the cached Contexts. ``context`` builds one :class:`base.Context` per (namespace,
scheduler name) and hands the same one back until a fact changes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from typing import Any, Literal, Protocol, TypeVar

from bridge import defaults, queues
from bridge.adapters import base
from bridge.k8s import client, paths, watching

__all__ = ["Facts", "View"]

log = logging.getLogger(__name__)
_MAX_CONTEXTS = 4096
V = TypeVar("V")


class View(Protocol):
    """What admission and the reconcilers read of the cluster facts (``Facts`` is the real one;
    tests and benches hand in their own)."""

    @property
    def synced(self) -> bool: ...

    def context(self, namespace: str, *, scheduler_name: str) -> base.Context: ...


@dataclasses.dataclass
class _Namespace:
    labels: dict[str, str]
    annotations: dict[str, str]


def _swapped(current: dict[str, V], kind: str, name: str, value: Callable[[], V]) -> dict[str, V]:
    """A new map: ``current`` after a watch event on ``name`` (swapped whole: readers see whole maps)."""
    if kind == "DELETED":
        return {k: v for k, v in current.items() if k != name}
    return {**current, name: value()}


class Facts:
    """A read-mostly cache: the watch loops write, admission reads ``context`` without awaiting."""

    def __init__(self, *, backend: Literal["volcano", "native"] = "volcano") -> None:
        self.backend: Literal["volcano", "native"] = backend
        self.namespaces: dict[str, _Namespace] = {}
        self.queues: dict[str, queues.QueueFacts] = {}
        self.priorities: dict[str, int] = {}
        self._synced: dict[str, bool] = {"namespaces": False, "queues": False, "priorityclasses": False}
        # Contexts are immutable and asked for on every review: built once per namespace, dropped
        # whenever a watch changes a fact.
        self._contexts: dict[tuple[str, str], base.Context] = {}

    @property
    def synced(self) -> bool:
        return all(self._synced.values())

    def context(self, namespace: str, *, scheduler_name: str) -> base.Context:
        """The facts of ``namespace`` (an unknown namespace has no labels or annotations)."""
        key = (namespace, scheduler_name)
        ctx = self._contexts.get(key)
        if ctx is None:
            ns = self.namespaces.get(namespace) or _Namespace({}, {})
            ctx = base.Context(
                namespace=namespace,
                namespace_labels=ns.labels,
                namespace_annotations=ns.annotations,
                queues=self.queues,
                priorities=self.priorities,
                scheduler_name=scheduler_name,
                backend=self.backend,
            )
            if len(self._contexts) >= _MAX_CONTEXTS:
                self._contexts.clear()
            self._contexts[key] = ctx
        return ctx

    async def run(self, api: client.Client) -> None:
        """Watch until cancelled; each source is marked synced after its first full list."""
        await asyncio.gather(
            self._follow(api, "namespaces", paths.resource("v1", "namespaces"), self.apply_namespace),
            self._follow(api, "queues", paths.resource(defaults.QUEUE_API, "queues"), self.apply_queue),
            self._follow(
                api,
                "priorityclasses",
                paths.resource("scheduling.k8s.io/v1", "priorityclasses"),
                self.apply_priority_class,
            ),
        )

    async def _follow(
        self, api: client.Client, source: str, path: str, apply: Callable[[str, dict[str, Any]], None]
    ) -> None:
        def synced() -> None:
            self._synced[source] = True

        await watching.follow(api, path, apply, on_synced=synced)

    def apply_namespace(self, kind: str, obj: dict[str, Any]) -> None:
        self._contexts = {}
        meta = obj.get("metadata") or {}
        if kind == "DELETED":
            self.namespaces.pop(meta.get("name", ""), None)
        else:
            self.namespaces[meta["name"]] = _Namespace(
                dict(meta.get("labels") or {}), dict(meta.get("annotations") or {})
            )

    def apply_queue(self, kind: str, obj: dict[str, Any]) -> None:
        self._contexts = {}
        name = (obj.get("metadata") or {}).get("name", "")
        self.queues = _swapped(self.queues, kind, name, lambda: queues.QueueFacts.from_api(obj))

    def apply_priority_class(self, kind: str, obj: dict[str, Any]) -> None:
        self._contexts = {}
        name = (obj.get("metadata") or {}).get("name", "")
        self.priorities = _swapped(self.priorities, kind, name, lambda: int(obj.get("value", 0)))
