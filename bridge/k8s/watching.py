"""The one way to follow a watch: list, then watch; relist on 410 Gone without replaying.

:func:`follow` is what every consumer uses (reconcilers, the facts cache, the scheduler's cache,
the node simulator): it hands each event to a handler until cancelled and never ends on one
object's or one call's error. A handler's exception is logged with the object's name and the
next event is handled; a failed list or watch (an API error, 404 until a CRD exists, 403 until
RBAC allows, a dropped connection) is retried with exponential backoff and jitter, and the
relist that follows is reported as a difference, exactly as after a 410.

:func:`watch`, underneath, yields ``(event_type, object)`` pairs. The first list is reported as
``ADDED`` events. After a 410 Gone (the resourceVersion fell out of etcd's window), or when a
:class:`Position` from an earlier run is handed in, it lists again and reports only the
difference against what it has reported so far: objects that changed as ``MODIFIED`` (or
``ADDED``), objects that vanished as ``DELETED`` (a stub with the namespace and name); unchanged
ones stay silent. After each list it yields ``("SYNCED", {})``, so a cache knows when it holds
the whole set.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from bridge import defaults, errors
from bridge.k8s import client as client_mod
from bridge.k8s import views

__all__ = ["Backoff", "Event", "Position", "follow", "relist", "watch"]

Event = tuple[str, dict[str, Any]]
Handler = Callable[[str, dict[str, Any]], Awaitable[None] | None]

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Position:
    """What a watch has reported: key → resourceVersion, and the version to resume from."""

    known: dict[str, str] = dataclasses.field(default_factory=dict)
    rv: str = ""


@dataclasses.dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter between failed lists or watches, reset by a good list."""

    first: float = 0.2
    most: float = 10.0
    factor: float = 2.0

    def next(self, delay: float) -> float:
        return self.first if delay <= 0 else min(delay * self.factor, self.most)

    @staticmethod
    def jittered(delay: float, rng: random.Random) -> float:
        return delay * rng.uniform(0.5, 1.0)


def _key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata", {})
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _rv(obj: dict[str, Any]) -> str:
    return str(obj.get("metadata", {}).get("resourceVersion", ""))


def relist(known: dict[str, str], items: list[dict[str, Any]]) -> list[Event]:
    """What a fresh list changes against ``known`` (key → resourceVersion, updated in place):
    ``ADDED``/``MODIFIED`` for objects new or changed, a ``DELETED`` stub (namespace and name)
    for each one the list lacks; objects at the same version are not reported again."""
    out: list[Event] = []
    seen = set()
    for obj in items:
        key = _key(obj)
        seen.add(key)
        if known.get(key) != _rv(obj):
            out.append(("MODIFIED" if key in known else "ADDED", obj))
            known[key] = _rv(obj)
    for key in [k for k in known if k not in seen]:
        namespace, _, name = key.partition("/")
        del known[key]
        out.append(("DELETED", {"metadata": {"namespace": namespace or None, "name": name}}))
    return out


async def _list(
    api: client_mod.Client, path: str, params: dict[str, Any], view: views.View | None
) -> tuple[list[dict[str, Any]], str]:
    """Everything, as informers list it: ``resourceVersion=0`` is served whole from the apiserver's
    watch cache in one response (no etcd read, no round trip per page); the watch that follows
    from the returned version brings anything newer. Pages are followed if the server sends any.
    """
    items: list[dict[str, Any]] = []
    cont: str | None = None
    while True:
        page_params = {**params, "continue": cont, "limit": 500} if cont else {**params, "resourceVersion": "0"}
        page = await api.request("GET", path, params=page_params, decode=view.list if view else None)
        items.extend(page.get("items", []))
        cont = page.get("metadata", {}).get("continue")
        if not cont:
            return items, page.get("metadata", {}).get("resourceVersion", "")


async def watch(
    api: client_mod.Client,
    path: str,
    *,
    params: dict[str, Any] | None = None,
    timeout_seconds: int = defaults.WATCH_TIMEOUT_SECONDS,
    position: Position | None = None,
    view: views.View | None = None,
) -> AsyncIterator[Event]:
    """Yield events for ``path`` (a collection) until cancelled or an error other than 410.

    ``position``, kept by the caller across calls, makes a new call list again and report only
    the difference against what earlier calls reported. ``view``: objects hold only its
    members (``views``); default whole.
    """
    params = dict(params or {})
    pos = position if position is not None else Position()
    known = pos.known  # key -> resourceVersion, of what we reported
    rv = pos.rv = ""  # a new call always lists: the caller may have missed events in between
    while True:
        if not rv:
            items, rv = await _list(api, path, params, view)
            for change in relist(known, items):
                yield change
            pos.rv = rv
            yield "SYNCED", {}
        try:
            async for event in api.stream_lines(
                path,
                {
                    **params,
                    "watch": "true",
                    "resourceVersion": rv,
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": timeout_seconds,
                },
                silence=timeout_seconds + defaults.WATCH_SILENCE_SECONDS,
                decode=view.event if view else None,
            ):
                kind, obj = event.get("type", ""), event.get("object", {})
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        rv = ""  # too old: relist
                        break
                    raise errors.ApiError(obj.get("code", 500), obj.get("reason", ""), obj.get("message", ""))
                rv = pos.rv = _rv(obj) or rv
                if kind == "BOOKMARK":
                    continue
                key = _key(obj)
                if kind == "DELETED":
                    known.pop(key, None)
                else:
                    known[key] = _rv(obj)
                yield kind, obj
        except errors.ApiError as exc:
            if exc.status != 410:
                raise
            rv = ""
        except client_mod.TRANSPORT_ERRORS:
            # Connection dropped, or silent past the server's own timeout (dead): resume from the
            # last resourceVersion.
            await asyncio.sleep(0.5)


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or '?'}".lstrip("/")


async def follow(
    api: client_mod.Client,
    path: str,
    handle: Handler,
    *,
    params: dict[str, Any] | None = None,
    on_synced: Callable[[], None] | None = None,
    backoff: Backoff = Backoff(),
    rng: random.Random | None = None,
    view: views.View | None = None,
) -> None:
    """Hand every event of ``path`` to ``handle(kind, obj)`` (sync or async) until cancelled;
    ``view``: objects hold only its members (``views``).

    ``SYNCED`` is not handed on: ``on_synced`` is called after each full list instead. Nothing
    but cancellation ends it: a handler's exception is logged and the next event handled; a
    failed list or watch is retried after a jittered, growing delay, reporting the relist as a
    difference against what was handed on before.
    """
    position = Position()
    rng = rng or random.Random()
    delay = 0.0
    while True:
        try:
            async for kind, obj in watch(api, path, params=params, position=position, view=view):
                if kind == "SYNCED":
                    delay = 0.0
                    if on_synced is not None:
                        on_synced()
                    continue
                try:
                    result = handle(kind, obj)
                    if inspect.isawaitable(result):
                        await result
                except asyncio.CancelledError:
                    raise
                except Exception:  # one object's trouble must not end the watch
                    log.exception("handling %s %s from %s failed", kind, _name(obj), path)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # 404 until a CRD exists, 403 until RBAC allows, a dropped connection
            delay = backoff.next(delay)
            quiet = isinstance(exc, errors.ApiError) and exc.status in (404, 429)
            (log.debug if quiet else log.warning)("watch of %s failed (%s); retrying in %.1f s", path, exc, delay)
            await asyncio.sleep(backoff.jittered(delay, rng))
