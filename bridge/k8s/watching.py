"""The one way to follow a watch: list once, then watch for ever from the last resourceVersion.

:func:`follow` is what every consumer uses (reconcilers, the facts cache, the scheduler's cache,
the node simulator): it hands each event to a handler until cancelled and never ends on one
object's or one call's error. A handler's exception is logged with the object's name and the
next event is handled; a failed list or watch (an API error, 404 until a CRD exists, 403 until
RBAC allows) is retried with exponential backoff and jitter.

:func:`watch`, underneath, yields ``(event_type, object)`` pairs. It lists only when it has no
resourceVersion to watch from: the first time (reported as ``ADDED`` events), after 410 Gone (the
version fell out of the apiserver's window), and after an error that a watch from the same
version cannot get past (:func:`resumable`). A list after the first is reported as a difference
against what was reported before: objects that changed as ``MODIFIED`` (or ``ADDED``), objects
that vanished as ``DELETED`` (a stub with the namespace and name); unchanged ones stay silent.
After each list it yields ``("SYNCED", {})``, so a cache knows when it holds the whole set.
Everything else resumes the watch from its resourceVersion without a list, as client-go's
reflector does: the server ending the watch (every ``timeoutSeconds``), a dropped connection,
a stream silent past the server's timeout, a 429 or 5xx. ``BOOKMARK`` events (asked for) move
the resourceVersion on, so a resumed watch starts near the present and is served from the
apiserver's watch cache. A :class:`Position` kept across calls carries all of this over.

An object that cannot be decoded (``views.UNDECODABLE``: it does not fit the view, or is nested
too deep), in a list page or in a watch event, is skipped, reported once per resourceVersion
(a warning naming it, ``STATS.skipped``), and the rest are handed on (``salvage``). The consumer
keeps what it had of that object; its deletion is still reported.

:data:`STATS` counts, per watch (its path and selectors: :func:`where`) and for the whole process,
the lists (by reason: ``first``, ``gone`` for 410, ``error``), the resumed watches (``end``,
``dropped``), the skipped objects and the bookmarks, for a metrics exporter to read when scraped
(``scheduler.io.metrics``); the kernel keeps plain numbers and imports no metrics library.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import inspect
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from typing import Any

from bridge import defaults, errors
from bridge.k8s import client, salvage, views

__all__ = [
    "DROPPED",
    "END",
    "ERROR",
    "FIRST",
    "GONE",
    "STATS",
    "Backoff",
    "Event",
    "Handler",
    "Position",
    "Stats",
    "follow",
    "list_objects",
    "relist",
    "resumable",
    "watch",
    "where",
]

Event = tuple[str, dict[str, Any]]
Handler = Callable[[str, dict[str, Any]], Awaitable[None] | None]
FIRST, GONE, ERROR = "first", "gone", "error"  # why a watch lists
END, DROPPED = "end", "dropped"  # why a watch is resumed
_RESUMABLE = frozenset({429, 500, 502, 503, 504})
_SELECTORS = ("labelSelector", "fieldSelector")

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Stats:
    """What the watches of this process did, by :func:`where` they watch: lists by (watch, reason),
    resumed watches by (watch, reason), objects skipped and bookmarks seen by watch. Read when
    scraped; only ever added to."""

    lists: collections.Counter[tuple[str, str]] = dataclasses.field(default_factory=collections.Counter)
    resumes: collections.Counter[tuple[str, str]] = dataclasses.field(default_factory=collections.Counter)
    skipped: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    bookmarks: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)

    def copy(self) -> Stats:
        return Stats(self.lists.copy(), self.resumes.copy(), self.skipped.copy(), self.bookmarks.copy())


STATS = Stats()


@dataclasses.dataclass
class Position:
    """Where a watch is, kept across calls: key → resourceVersion of what was reported, the
    version to resume from ("" to list), why the next list happens, the objects skipped and
    reported (key → resourceVersion), and how many watch streams have answered."""

    known: dict[str, str] = dataclasses.field(default_factory=dict)
    rv: str = ""
    reason: str = FIRST
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)
    streams: int = 0


@dataclasses.dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter between failed lists or watches, reset by a good one."""

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


def relist(known: dict[str, str], items: list[dict[str, Any]], kept: Collection[str] = ()) -> list[Event]:
    """What a fresh list changes against ``known`` (key → resourceVersion, updated in place):
    ``ADDED``/``MODIFIED`` for objects new or changed, a ``DELETED`` stub (namespace and name)
    for each one the list lacks; objects at the same version are not reported again. ``kept``:
    keys the list holds but could not decode; they are neither reported nor deleted."""
    out: list[Event] = []
    seen = set(kept)
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


def resumable(exc: BaseException) -> bool:
    """Whether a watch that failed with ``exc`` may be resumed from its resourceVersion (client-go's
    reflector: too many requests, a server error) rather than listed again (410 Gone, a version
    the server does not have yet, 403, 404, anything else)."""
    if isinstance(exc, client.TRANSPORT_ERRORS):
        return True
    if not isinstance(exc, errors.ApiError) or exc.status not in _RESUMABLE:
        return False
    return "too large resource version" not in exc.message.lower()


def where(path: str, params: dict[str, Any] | None = None) -> str:
    """What a watch is named by in ``STATS`` and its log lines: the path, with its selectors."""
    selectors = [f"{k}={(params or {})[k]}" for k in _SELECTORS if (params or {}).get(k)]
    return f"{path}?{'&'.join(selectors)}" if selectors else path


def _report(pos: Position, path: str, lost: list[salvage.Skipped]) -> None:
    for one in lost:
        if pos.skipped.get(one.key) == one.rv and one.key in pos.skipped:
            continue  # reported already, at this version
        pos.skipped[one.key] = one.rv
        STATS.skipped[path] += 1
        log.warning(
            "skipped %s %s from %s (resourceVersion %s): it cannot be decoded (%s)",
            one.kind or "object",
            one.name,
            path,
            one.rv or "?",
            one.why,
        )


async def _list(
    api: client.Client, path: str, params: dict[str, Any], codec: views.Codec, *, current: bool = False
) -> tuple[list[dict[str, Any]], str, list[salvage.Skipped]]:
    """Everything, as informers list it: ``resourceVersion=0`` is served whole from the apiserver's
    watch cache in one response (no etcd read, no round trip per page); the watch that follows
    from the returned version brings anything newer (``current``: no resourceVersion, the
    apiserver's latest state, for a one-off list). Pages are followed if the server sends any.
    A page is decoded in one pass; only if that fails is it taken apart (``salvage.page``)."""
    items: list[dict[str, Any]] = []
    lost: list[salvage.Skipped] = []

    def decode(body: bytes) -> dict[str, Any]:
        try:
            return codec.list(body)
        except views.UNDECODABLE:
            page, dropped = salvage.page(codec, body)
            lost.extend(dropped)
            return page

    cont: str | None = None
    first = dict(params) if current else {**params, "resourceVersion": "0"}
    while True:
        page_params = {**params, "continue": cont, "limit": 500} if cont else first
        page = await api.request("GET", path, params=page_params, decode=decode)
        items.extend(page.get("items", []))
        cont = page.get("metadata", {}).get("continue")
        if not cont:
            return items, page.get("metadata", {}).get("resourceVersion", ""), lost


async def list_objects(
    api: client.Client, path: str, *, params: dict[str, Any] | None = None, view: views.View | None = None
) -> list[dict[str, Any]]:
    """Every object of ``path`` now, for a one-off read (a command's table): decoded as a watch
    decodes them, an object that cannot be decoded skipped and reported (a warning, ``STATS``)."""
    items, _, lost = await _list(api, path, dict(params or {}), view or views.WHOLE, current=True)
    _report(Position(), where(path, params), lost)
    return items


async def _relist(
    api: client.Client, path: str, params: dict[str, Any], codec: views.Codec, pos: Position
) -> AsyncIterator[Event]:
    """List, count and log it with its reason, report what was skipped, yield the difference."""
    items, rv, lost = await _list(api, path, params, codec)
    name = where(path, params)
    STATS.lists[(name, pos.reason)] += 1
    (log.info if pos.reason == FIRST else log.warning)(
        "listed %s (%s): %d objects at resourceVersion %s", name, pos.reason, len(items), rv
    )
    _report(pos, name, lost)
    pos.skipped = {one.key: one.rv for one in lost}
    for change in relist(pos.known, items, kept={one.key for one in lost}):
        yield change
    pos.rv, pos.reason = rv, GONE
    yield "SYNCED", {}


async def watch(
    api: client.Client,
    path: str,
    *,
    params: dict[str, Any] | None = None,
    timeout_seconds: int | None = None,
    position: Position | None = None,
    view: views.View | None = None,
) -> AsyncIterator[Event]:
    """Yield events for ``path`` (a collection) until cancelled or an error other than 410 or a
    dropped connection.

    ``position``, kept by the caller across calls, resumes a new call where the last one ended
    (from its resourceVersion, or with a list reported as a difference when it has none).
    ``view``: objects hold only its members (``views``); default whole. ``timeout_seconds``: how
    long the server keeps each watch open (default: the client's ``watch_timeout``).
    """
    params = dict(params or {})
    pos = position if position is not None else Position()
    codec = view if view is not None else views.WHOLE
    timeout = timeout_seconds or api.watch_timeout
    name = where(path, params)
    backoff, delay, rng = Backoff(), 0.0, random.Random()
    gone_delay, listed = 0.0, -1  # 410s straight after a list wait, growing; pos.streams at the list
    while True:
        if not pos.rv:
            async for change in _relist(api, path, params, codec, pos):
                yield change
            listed = pos.streams
        answered = False
        try:
            async for line in api.stream_lines(
                path,
                {
                    **params,
                    "watch": "true",
                    "resourceVersion": pos.rv,
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": timeout,
                },
                silence=timeout + defaults.WATCH_SILENCE_SECONDS,
            ):
                if not answered:
                    answered, delay = True, 0.0
                    pos.streams += 1
                try:
                    event = codec.event(line)
                except views.UNDECODABLE as exc:
                    lost = salvage.skipped(line, exc, event=True)
                    pos.rv = lost.rv or pos.rv
                    if lost.kind != "DELETED":
                        _report(pos, name, [lost])
                        continue
                    pos.skipped.pop(lost.key, None)
                    if pos.known.pop(lost.key, None) is not None:  # what the consumer holds goes
                        yield "DELETED", lost.stub()
                    continue
                kind, obj = event["type"], event["object"]
                if kind == "ERROR":  # a Status: 410 lists again (below), anything else is the caller's
                    raise errors.ApiError(obj.get("code", 500), obj.get("reason", ""), obj.get("message", ""))
                pos.rv = _rv(obj) or pos.rv
                if kind == "BOOKMARK":
                    STATS.bookmarks[name] += 1
                    continue
                key = _key(obj)
                if pos.skipped:
                    pos.skipped.pop(key, None)
                if kind == "DELETED":
                    pos.known.pop(key, None)
                else:
                    pos.known[key] = _rv(obj)
                yield kind, obj
            STATS.resumes[(name, END)] += 1
            log.debug("watch of %s ended; resuming from %s", name, pos.rv)
            if answered:
                gone_delay = 0.0
                continue
        except errors.ApiError as exc:
            if exc.status != 410:
                raise
            pos.rv, pos.reason = "", GONE  # too old: list again
            if pos.streams - listed <= 1:  # the first watch after a list: the server lags, not at once
                gone_delay = backoff.next(gone_delay)
                await asyncio.sleep(backoff.jittered(gone_delay, rng))
            continue
        except client.TRANSPORT_ERRORS as exc:
            # Connection dropped, or silent past the server's own timeout (dead): resume from the
            # last resourceVersion.
            STATS.resumes[(name, DROPPED)] += 1
            log.info("watch of %s dropped (%s); resuming from %s", name, exc or type(exc).__name__, pos.rv)
        delay = backoff.next(delay)  # dropped, or ended with nothing said: not at once
        await asyncio.sleep(backoff.jittered(delay, rng))


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or '?'}".lstrip("/")


async def follow(
    api: client.Client,
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
    failed list or watch is retried after a jittered, growing delay (reset once a watch has
    answered since), resuming the watch when :func:`resumable`, else listing again and
    reporting the difference against what was handed on before.
    """
    position = Position()
    rng = rng or random.Random()
    delay, streams = 0.0, 0
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
        except Exception as exc:  # 404 until a CRD exists, 403 until RBAC allows, a 5xx
            if position.rv and not resumable(exc):
                position.rv, position.reason = "", ERROR
            delay = backoff.next(delay if position.streams == streams else 0.0)
            streams = position.streams
            quiet = isinstance(exc, errors.ApiError) and exc.status in (404, 429)
            (log.debug if quiet else log.warning)("watch of %s failed (%s); retrying in %.1f s", path, exc, delay)
            await asyncio.sleep(backoff.jittered(delay, rng))
