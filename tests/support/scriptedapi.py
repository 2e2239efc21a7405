"""A scripted apiserver on loopback for the watch's unit tests: one collection, whose lists and
watch streams answer from a script, recording every request's query.

``ScriptedApi(lists, watches)``: ``lists`` are the bodies of successive list answers (the last
one repeats); ``watches`` the successive watch answers, each a ``Stream``: lines sent, then how
it ends (``"end"``: the server closes it as at ``timeoutSeconds``; ``"drop"``: the connection
is cut mid-stream; ``"hang"``: nothing more until the client gives up; or an HTTP status to
answer instead of a stream). Past the script, a watch hangs. ``served`` is set each time a
request has been answered, so a test waits on events, not sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
from aiohttp import web

from bridge.k8s import client, kubeconfigs

PATH = "/apis/x.io/v1/things"


@dataclasses.dataclass
class Stream:
    lines: list[bytes]
    end: str | int = "end"


def event(kind: str, name: str, rv: str, **extra: Any) -> bytes:
    return orjson.dumps(
        {"type": kind, "object": {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}, **extra}}
    )


def bookmark(rv: str) -> bytes:
    return orjson.dumps(
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": rv}, "spec": {"containers": None}}}
    )


def listed(rv: str, *items: bytes) -> bytes:
    return b'{"metadata":{"resourceVersion":"' + rv.encode() + b'"},"items":[' + b",".join(items) + b"]}"


def thing(name: str, rv: str, **extra: Any) -> bytes:
    return orjson.dumps({"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}, **extra})


class ScriptedApi:
    def __init__(self, lists: list[bytes], watches: list[Stream]) -> None:
        self.lists = lists
        self.watches = list(watches)
        self.requests: list[dict[str, str]] = []
        self.arrivals: list[float] = []  # monotonic time of each request
        self.served = asyncio.Event()
        self._runner: web.AppRunner | None = None

    @property
    def list_requests(self) -> list[dict[str, str]]:
        return [q for q in self.requests if q.get("watch") != "true"]

    @property
    def watch_versions(self) -> list[str]:
        return [q["resourceVersion"] for q in self.requests if q.get("watch") == "true"]

    async def wait_for(self, requests: int, timeout: float = 10.0) -> None:
        """Until ``requests`` requests have been answered (a hang is answered when it starts)."""
        async with asyncio.timeout(timeout):
            while len(self.requests) < requests:
                self.served.clear()
                await self.served.wait()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        query = dict(request.query)
        self.requests.append(query)
        self.arrivals.append(time.monotonic())
        try:
            if query.get("watch") != "true":
                body = self.lists[min(len(self.list_requests) - 1, len(self.lists) - 1)]
                return web.Response(body=body, content_type="application/json")
            script = self.watches.pop(0) if self.watches else Stream([], "hang")
            if isinstance(script.end, int):
                status = orjson.dumps({"kind": "Status", "code": script.end, "message": "scripted"})
                return web.Response(status=script.end, body=status, content_type="application/json")
            response = web.StreamResponse()
            await response.prepare(request)
            for line in script.lines:
                await response.write(line + b"\n")
            if script.end == "drop":
                assert request.transport is not None
                request.transport.abort()
            elif script.end == "hang":
                self.served.set()
                await asyncio.Event().wait()
            else:
                await response.write_eof()
            return response
        finally:
            self.served.set()

    async def __aenter__(self) -> ScriptedApi:
        app = web.Application()
        app.router.add_get(PATH, self._handle)
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    def connection(self) -> kubeconfigs.Connection:
        assert self._runner is not None
        port = self._runner.addresses[0][1]
        return kubeconfigs.Connection(server=f"http://127.0.0.1:{port}", ca_file=None, cert_file=None, key_file=None)


@contextlib.asynccontextmanager
async def serving(lists: list[bytes], watches: list[Stream]) -> AsyncIterator[tuple[ScriptedApi, client.Client]]:
    """The scripted server and a client of it (``watch_timeout`` 1 s), closed afterwards."""
    async with ScriptedApi(lists, watches) as api, client.Client(api.connection(), watch_timeout=1) as conn:
        yield api, conn
