"""Cluster facts admission consults: namespaces, queues, priority classes, kept current by watches.

``View`` is the Protocol its readers (admission, the reconcilers) type against.
``run`` follows three watches; each event goes to an ``apply_*`` function (ADDED, MODIFIED or
DELETED and the object), which replaces whole maps so readers never see a half-applied change,
and drops the cached Contexts. ``context`` builds one :class:`base.Context` per (namespace,
scheduler name) and hands the same one back until a fact changes.

A watch lags its writes by milliseconds, so a queue made just before the object that names it
(a queue tree applied from one file: each ``spec.parent``) may not be in the map yet. The
Context's ``queues`` therefore reads a queue it does not hold from the apiserver (a GET, at most
``defaults.FACTS_READ_SECONDS``) before it answers "missing", and keeps what it read (at most
``defaults.FACTS_READ_CACHE`` queues, for ``defaults.FACTS_READ_KEEP_SECONDS``) until the
watch shows that queue. A read waits on the
watch loop's client, so it is made only from another thread (the webhook server runs the
reviews that need it, ``Registration.reads``, in its worker threads); on the loop itself a miss
is a miss, as before. Reads are counted in ``Facts.reads``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, Protocol, TypeVar

from bridge import defaults, errors, queues
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


class _Queues(Mapping[str, queues.QueueFacts]):
    """One version of the queues map; a name it lacks is asked of ``read`` (the apiserver)."""

    def __init__(self, known: dict[str, queues.QueueFacts], read: Callable[[str], queues.QueueFacts | None]) -> None:
        self._known, self._read = known, read

    def __getitem__(self, name: str) -> queues.QueueFacts:
        found = self._known.get(name)
        if found is None:
            found = self._read(name)
            if found is None:
                raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._known or (isinstance(name, str) and self._read(name) is not None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._known)

    def __len__(self) -> int:
        return len(self._known)


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
        # Queues read from the apiserver because the watch had not shown them yet (see the module).
        self._read: dict[str, tuple[float, queues.QueueFacts]] = {}
        self._api: client.Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.reads = 0  # queues read from the apiserver on a miss

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
                queues=_Queues(self.queues, self.read_queue),
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
        self._api, self._loop = api, asyncio.get_running_loop()
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
        self._read.pop(name, None)  # the watch has it now (or it is gone)

    def read_queue(self, name: str) -> queues.QueueFacts | None:
        """Queue ``name`` as the apiserver has it now (None: it does not exist, or it could not be
        read in time, or this is the watch loop's own thread, which must not wait on itself)."""
        kept = self._read.get(name)
        if kept is not None and time.monotonic() - kept[0] < defaults.FACTS_READ_KEEP_SECONDS:
            return kept[1]
        if not name:
            return None
        api, loop = self._api, self._loop
        if api is None or loop is None or loop.is_closed() or _on_loop(loop):
            return None
        future = asyncio.run_coroutine_threadsafe(self._get_queue(api, name), loop)
        try:
            found = future.result(timeout=defaults.FACTS_READ_SECONDS)
        except client.TRANSPORT_ERRORS as exc:  # a refused or dropped connection: unread, not a crash
            log.warning("queue %s: not in the facts yet and the apiserver could not be reached: %r", name, exc)
            return None
        except (concurrent.futures.TimeoutError, errors.ApiError) as exc:
            future.cancel()
            log.warning("queue %s: not in the facts yet and not read from the apiserver: %s", name, exc)
            return None
        self.reads += 1
        if found is not None and name not in self.queues:
            if len(self._read) >= defaults.FACTS_READ_CACHE:
                self._read = {}
            self._read = {**self._read, name: (time.monotonic(), found)}
        return found

    @staticmethod
    async def _get_queue(api: client.Client, name: str) -> queues.QueueFacts | None:
        try:
            obj = await api.request("GET", paths.resource(defaults.QUEUE_API, "queues", name=name))
        except errors.ApiError as exc:
            if exc.status == 404:
                return None
            raise
        return queues.QueueFacts.from_api(obj)

    def apply_priority_class(self, kind: str, obj: dict[str, Any]) -> None:
        self._contexts = {}
        name = (obj.get("metadata") or {}).get("name", "")
        self.priorities = _swapped(self.priorities, kind, name, lambda: int(obj.get("value", 0)))


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
