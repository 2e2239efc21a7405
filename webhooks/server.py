"""The HTTPS admission server: uvicorn (uvloop, httptools) with a small raw ASGI app.

Routes: ``POST /mutate/<adapter>`` (AdmissionReview v1), ``GET /healthz``, ``GET /readyz``
(ready once the cluster facts are synced). Bodies are capped at 3 MiB on the bytes actually
read, and a client that stalls mid-body gets 408 after ``read_timeout`` seconds.

Below the app, :mod:`webhooks.limits` keeps the connections in two pools a silent client cannot
fill (before the first request head, the oldest gives way to a new one; after it, the longest
idle does), bounds the time from accept to a complete request head (TLS handshake included) and
its size; :mod:`webhooks.tls` makes the TLS context (1.2+,
AEAD only, optionally requiring the apiserver's client certificate) and reloads the certificate
while serving.

A review whose body is over ``offloop_bytes`` (a Volcano Job of thousands of tasks takes
seconds of CPU), or whose adapter may read the apiserver (``Registration.reads``: a queue's
parent not yet in the facts), runs in one of ``heavy_reviews`` worker threads, so the event loop keeps
answering health checks and small reviews meanwhile; the rest wait for a thread. The facts it
reads are swapped whole by the watch loops, so a thread reads a consistent map.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import logging
import pathlib
import ssl
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

import uvicorn

from bridge import defaults, errors
from bridge import facts as cluster_facts
from bridge.adapters import registry
from webhooks import admission, limits, reviews, tls

__all__ = ["App", "Message", "Receive", "Scope", "Send", "Settings", "serve", "server"]

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
_JSON = [(b"content-type", b"application/json")]


@dataclasses.dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 9443
    certfile: pathlib.Path | None = None
    keyfile: pathlib.Path | None = None
    scheduler_name: str = defaults.SCHEDULER_NAME
    read_timeout: float = defaults.BODY_TIMEOUT_SECONDS
    reload_seconds: float = defaults.TLS_RELOAD_SECONDS
    client_ca: pathlib.Path | None = None  # require a client certificate signed by this CA
    header_timeout: float = defaults.HEADER_TIMEOUT_SECONDS
    max_header_bytes: int = defaults.MAX_HEADER_BYTES
    max_connections: int = defaults.MAX_CONNECTIONS
    max_pending: int = defaults.MAX_PENDING_CONNECTIONS
    offloop_bytes: int = defaults.OFFLOOP_REVIEW_BYTES
    heavy_reviews: int = defaults.HEAVY_REVIEWS

    @property
    def limits(self) -> limits.Limits:
        return limits.Limits(self.header_timeout, self.max_header_bytes, self.max_connections, self.max_pending)


class App:
    def __init__(self, facts: cluster_facts.View, settings: Settings) -> None:
        self.facts = facts
        self.settings = settings
        self.reloader: tls.CertReloader | None = None  # set by ``serve`` once listening over TLS
        self.gate: limits.Gate | None = None  # set by ``server``: the connection counts
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # uvicorn runs with lifespan="off": no lifespan scope arrives
            return
        path, method = scope["path"], scope["method"]
        if method == "GET" and path == "/healthz":
            await _reply(send, 200, b'{"status":"ok"}')
        elif method == "GET" and path == "/readyz":
            ready = getattr(self.facts, "synced", True)
            await _reply(send, 200 if ready else 503, b'{"ready":true}' if ready else b'{"ready":false}')
        elif method == "POST" and path.startswith("/mutate/"):
            body = await _read_body(receive, send, self.settings.read_timeout)
            if body is not None:
                adapter = registry.by_path(path)
                review = functools.partial(
                    admission.handle, body, adapter, self.facts, scheduler_name=self.settings.scheduler_name
                )
                reads = adapter is not None and adapter.registration.reads  # may wait on the apiserver
                if len(body) > self.settings.offloop_bytes or reads:
                    answer = await asyncio.get_running_loop().run_in_executor(self._heavy(), review)
                else:
                    answer = review()
                await _reply(send, 200, answer)
        else:
            await _reply(send, 404, b'{"error":"not found"}')

    def _heavy(self) -> concurrent.futures.ThreadPoolExecutor:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=self.settings.heavy_reviews, thread_name_prefix="vbridge-review"
            )
        return self._pool

    def close(self) -> None:
        """Let the worker threads go once the reviews they run are done."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


async def _read_body(receive: Receive, send: Send, timeout: float) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    timed_out = False

    def expire() -> None:
        nonlocal timed_out
        timed_out = True
        task.cancel()

    # One timer for the whole body (cheaper than a timeout context per chunk): a client that has
    # not sent all of it within ``timeout`` seconds gets 408.
    timer = loop.call_later(timeout, expire)
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > reviews.MAX_BODY:
                timer.cancel()
                await _reply(send, 413, b'{"error":"AdmissionReview larger than 3 MiB"}')
                return None
            chunks.append(chunk)
            if not message.get("more_body"):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except asyncio.CancelledError:
        if not timed_out or task.uncancel() > 0:
            raise  # cancelled from outside (shutdown): not ours to swallow
        await _reply(send, 408, b'{"error":"request body not received in time"}')
        return None
    finally:
        timer.cancel()


async def _reply(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*_JSON, (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the embedding program owns SIGINT/SIGTERM


def server(app: App) -> uvicorn.Server:
    """The uvicorn server of ``app``: TLS (when a certificate is set) and limits are in its protocol."""
    s = app.settings
    context = None
    if s.certfile and s.keyfile:
        context = tls.server_context(s.certfile, s.keyfile, client_ca=s.client_ca)
    elif s.client_ca:
        raise errors.ConfigError("a client CA needs TLS: give the serving certificate and key too")
    app.gate = limits.Gate(limits.fit(s.limits), context)
    config = uvicorn.Config(
        app,
        host=s.host,
        port=s.port,
        loop="uvloop",
        http=limits.protocol_class(app.gate),  # TLS is started there, once the connection has a place
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=60,
    )
    return _Server(config)


async def serve(app: App, *, started: asyncio.Event | None = None) -> None:
    """Serve until cancelled, then close the listening socket and finish open requests."""
    srv = server(app)
    task = asyncio.create_task(srv.serve())
    reloading: asyncio.Task[None] | None = None
    try:
        while not srv.started and not task.done():
            await asyncio.sleep(0.01)
        s = app.settings
        context = app.gate.context if app.gate is not None else None
        if srv.started and s.certfile and s.keyfile and isinstance(context, ssl.SSLContext):
            reloader = tls.CertReloader(context, s.certfile, s.keyfile)
            app.reloader = reloader
            reloading = asyncio.create_task(reloader.run(s.reload_seconds))
        if started is not None:
            started.set()
        await asyncio.shield(task)
    except asyncio.CancelledError:
        srv.should_exit = True  # a graceful shutdown: close the listener and open connections
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):  # a second cancel must not cut it short
                await asyncio.shield(task)
        raise
    finally:
        app.close()
        if reloading is not None:
            reloading.cancel()
            await asyncio.gather(reloading, return_exceptions=True)
