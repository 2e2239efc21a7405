"""List, then watch; relist on 410 Gone without replaying what was already seen.

:func:`watch` yields ``(event_type, object)`` pairs. The first list is reported as ``ADDED``
events. After a 410 Gone (the resourceVersion fell out of etcd's window) it lists again and
reports only the difference against what it has reported so far: objects that changed as
``MODIFIED`` (or ``ADDED``), objects that vanished as ``DELETED``; unchanged ones stay silent.
After each list it yields ``("SYNCED", {})``, so a cache knows when it holds the whole set.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from bridge import errors
from bridge.k8s import client as client_mod

__all__ = ["Event", "watch"]

Event = tuple[str, dict[str, Any]]


def _key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata", {})
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _rv(obj: dict[str, Any]) -> str:
    return str(obj.get("metadata", {}).get("resourceVersion", ""))


async def _list(api: client_mod.Client, path: str, params: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """Everything, as informers list it: ``resourceVersion=0`` is served whole from the apiserver's
    watch cache in one response (no etcd read, no round trip per page); the watch that follows
    from the returned version brings anything newer. Pages are followed if the server sends any.
    """
    items: list[dict[str, Any]] = []
    cont: str | None = None
    while True:
        page_params = {**params, "continue": cont, "limit": 500} if cont else {**params, "resourceVersion": "0"}
        page = await api.request("GET", path, params=page_params)
        items.extend(page.get("items", []))
        cont = page.get("metadata", {}).get("continue")
        if not cont:
            return items, page.get("metadata", {}).get("resourceVersion", "")


async def watch(
    api: client_mod.Client,
    path: str,
    *,
    params: dict[str, Any] | None = None,
    timeout_seconds: int = 300,
) -> AsyncIterator[Event]:
    """Yield events for ``path`` (a collection) until cancelled."""
    params = dict(params or {})
    known: dict[str, str] = {}  # key -> resourceVersion, of what we reported
    rv = ""
    while True:
        if not rv:
            items, rv = await _list(api, path, params)
            seen = set()
            for obj in items:
                key = _key(obj)
                seen.add(key)
                if known.get(key) != _rv(obj):
                    kind = "MODIFIED" if key in known else "ADDED"
                    known[key] = _rv(obj)
                    yield kind, obj
            for key in set(known) - seen:
                namespace, _, name = key.partition("/")
                del known[key]
                yield "DELETED", {"metadata": {"namespace": namespace or None, "name": name}}
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
            ):
                kind, obj = event.get("type", ""), event.get("object", {})
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        rv = ""  # too old: relist
                        break
                    raise errors.ApiError(obj.get("code", 500), obj.get("reason", ""), obj.get("message", ""))
                rv = _rv(obj) or rv
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
            await asyncio.sleep(0.5)  # connection dropped: resume from the last resourceVersion
