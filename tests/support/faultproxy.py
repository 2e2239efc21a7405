"""A small HTTP proxy in front of the apiserver that fails chosen calls, or lets another writer
act just before them.

Toxiproxy cuts and slows TCP; it cannot answer one chosen request with a status. This proxy
can: ``FaultProxy(lc).start()`` listens on loopback (plain HTTP) and writes ``kubeconfig``, the
admin kubeconfig of ``lc`` with the proxy as its server. Every request is forwarded to the
apiserver over TLS as ``lc``'s admin (its client certificate) and the answer streamed back as it
arrives (watches included), unless a rule matches it:

    rule = proxy.fail("POST", r"/api/v1/namespaces/ns/pods/[^/]+/binding", 500, times=2)
    rule = proxy.fail("PATCH", r".*/podgroups/g", 429, retry_after=1)
    rule = proxy.before("POST", r".*/pods/p-0/binding", lambda path, body: ...)

A ``drop`` rule closes the connection instead of answering. A ``fail`` rule answers its next
``times`` matching requests itself with ``status`` (a ``Status`` body as the apiserver writes
one, ``Retry-After`` when given); they never reach the apiserver. A ``before`` rule runs its
action (a blocking function: it is run in a thread, and may use the test's own client) and then
forwards the request, so the apiserver answers it after the action took effect: a real 409 from
a real conflict. ``rule.hits`` lists the paths each
rule took, so a test can show its fault happened.
"""

from __future__ import annotations

import asyncio
import dataclasses
import pathlib
import re
import threading
from collections.abc import Callable
from typing import Any

import aiohttp
import yaml
from aiohttp import web

from bridge.k8s import kubeconfigs
from tests.support import loopthread
from vbridge.localcluster import cluster

__all__ = ["Action", "FaultProxy", "Rule"]

Action = Callable[[str, bytes], None]  # (request path, request body)
REASONS = {409: "Conflict", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}
_HOP = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"})


@dataclasses.dataclass
class Rule:
    method: str
    path: str  # a regular expression the whole request path (without the query) must match
    times: int
    status: int = 0  # 0: forward after ``action`` (or drop the connection, with ``drop``)
    drop: bool = False
    retry_after: int | None = None
    action: Action | None = None
    hits: list[str] = dataclasses.field(default_factory=list)

    def matches(self, method: str, path: str) -> bool:
        return self.times > len(self.hits) and method == self.method and re.fullmatch(self.path, path) is not None


class FaultProxy(loopthread.LoopThread):
    def __init__(self, lc: cluster.LocalCluster) -> None:
        self.port = cluster.free_port()
        conn = kubeconfigs.load(lc.kubeconfig)
        self._upstream = conn.server
        self._ssl = conn.ssl_context()
        self._rules: list[Rule] = []
        self._lock = threading.Lock()
        self._session: aiohttp.ClientSession | None = None
        doc = yaml.safe_load(lc.kubeconfig.read_text())
        for entry in doc["clusters"]:
            entry["cluster"]["server"] = f"http://127.0.0.1:{self.port}"
        self.kubeconfig: pathlib.Path = lc.workdir / f"kubeconfig-faults-{self.port}"
        self.kubeconfig.write_text(yaml.safe_dump(doc))

        async def main(ready: asyncio.Event) -> None:
            connector = aiohttp.TCPConnector(ssl=self._ssl, limit=256)
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=5.0)
            async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False) as session:
                app = web.Application(client_max_size=8 * 1024 * 1024)
                self._session = session
                app.router.add_route("*", "/{tail:.*}", self._handle)
                runner = web.AppRunner(app, access_log=None)
                await runner.setup()
                await web.TCPSite(runner, "127.0.0.1", self.port).start()
                ready.set()
                try:
                    await asyncio.Event().wait()
                finally:
                    await runner.cleanup()

        super().__init__(main, f"fault-proxy-{self.port}")

    def fail(self, method: str, path: str, status: int, *, times: int = 1, retry_after: int | None = None) -> Rule:
        """Answer the next ``times`` matching requests with ``status`` (never forwarded)."""
        return self._add(Rule(method, path, times, status=status, retry_after=retry_after))

    def drop(self, method: str, path: str, *, times: int = 1) -> Rule:
        """Close the connection of the next ``times`` matching requests without an answer."""
        return self._add(Rule(method, path, times, drop=True))

    def before(self, method: str, path: str, action: Action, *, times: int = 1) -> Rule:
        """Run ``action`` just before the next ``times`` matching requests are forwarded."""
        return self._add(Rule(method, path, times, action=action))

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def _add(self, rule: Rule) -> Rule:
        with self._lock:
            self._rules.append(rule)
        return rule

    def _take(self, method: str, path: str) -> Rule | None:
        with self._lock:
            for rule in self._rules:
                if rule.matches(method, path):
                    rule.hits.append(path)
                    return rule
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        session = self._session
        assert session is not None
        body = await request.read()
        rule = self._take(request.method, request.path)
        if rule is not None and rule.status:
            headers = {"Retry-After": str(rule.retry_after)} if rule.retry_after is not None else {}
            return web.json_response(_status(rule.status), status=rule.status, headers=headers)
        if rule is not None and rule.drop and request.transport is not None:
            request.transport.abort()  # the client sees the server disconnect, no answer
            return web.Response(status=500)  # never sent
        if rule is not None and rule.action is not None:
            await asyncio.to_thread(rule.action, request.path, body)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP and k.lower() != "host"}
        async with session.request(
            request.method, self._upstream + request.path_qs, data=body or None, headers=headers
        ) as upstream:
            response = web.StreamResponse(
                status=upstream.status,
                headers={k: v for k, v in upstream.headers.items() if k.lower() not in _HOP},
            )
            await response.prepare(request)
            try:
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
            except ConnectionResetError:
                pass  # the component closed its end (a watch it stopped following)
            return response


def _status(code: int) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"injected by the fault proxy: {code}",
        "reason": REASONS.get(code, ""),
        "code": code,
    }
