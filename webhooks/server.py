"""The HTTPS admission server: uvicorn (uvloop, httptools) with a small raw ASGI app.

Routes: ``POST /mutate/<adapter>`` (AdmissionReview v1), ``GET /healthz``, ``GET /readyz``
(ready once the cluster facts are synced). Bodies are capped at 3 MiB on the bytes actually
read, and a client that stalls mid-body gets 408 after ``read_timeout`` seconds.

The certificate is reloaded while serving (:class:`CertReloader`): every ``reload_seconds`` the
files are read again (a mounted Secret changes by a symlink swap, so their contents are what
counts), and a new pair goes into the live SSL context, which every new connection's handshake
uses; connections already open keep theirs. A pair that does not load (half written, key and
certificate apart) is logged and the old one kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import pathlib
import ssl
import tempfile
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

import uvicorn

from bridge import defaults
from bridge import facts as facts_mod
from bridge.adapters import registry
from webhooks import admission, reviews

__all__ = ["App", "CertReloader", "Settings", "serve", "server"]

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
    read_timeout: float = 5.0
    reload_seconds: float = defaults.TLS_RELOAD_SECONDS


class App:
    def __init__(self, facts: facts_mod.View, settings: Settings) -> None:
        self.facts = facts
        self.settings = settings
        self.reloader: CertReloader | None = None  # set by ``serve`` once listening over TLS

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
                answer = admission.handle(
                    body, registry.by_path(path), self.facts, scheduler_name=self.settings.scheduler_name
                )
                await _reply(send, 200, answer)
        else:
            await _reply(send, 404, b'{"error":"not found"}')


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
    s = app.settings
    config = uvicorn.Config(
        app,
        host=s.host,
        port=s.port,
        ssl_certfile=str(s.certfile) if s.certfile else None,
        ssl_keyfile=str(s.keyfile) if s.keyfile else None,
        loop="uvloop",
        http="httptools",
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=60,
        h11_max_incomplete_event_size=reviews.MAX_BODY,
    )
    return _Server(config)


class CertReloader:
    """Loads the pair at ``certfile``/``keyfile`` into ``context`` whenever their contents change."""

    def __init__(self, context: ssl.SSLContext, certfile: pathlib.Path, keyfile: pathlib.Path) -> None:
        self.context = context
        self.certfile = certfile
        self.keyfile = keyfile
        self.reloads = 0  # pairs loaded since the server started (the first check counts one)
        self._loaded: tuple[bytes, bytes] | None = None
        self._rejected: tuple[bytes, bytes] | None = None

    def _read(self) -> tuple[bytes, bytes] | None:
        try:
            return self.certfile.read_bytes(), self.keyfile.read_bytes()
        except OSError as exc:
            log.warning("cannot read the TLS pair (%s); serving the one loaded before", exc)
            return None

    def check(self) -> bool:
        """Load the pair on disk if it is new and sound; True if it was loaded."""
        pair = self._read()
        if pair is None or pair in (self._loaded, self._rejected):
            return False
        try:
            _load_pair(self.context, pair)
        except (ssl.SSLError, OSError, ValueError) as exc:
            log.warning("the new TLS pair in %s does not load (%s); serving the one loaded before", self.certfile, exc)
            self._rejected = pair
            return False
        if self._loaded is not None:
            log.info("loaded the new TLS pair of %s", self.certfile)
        self._loaded, self._rejected = pair, None
        self.reloads += 1
        return True

    async def run(self, period: float) -> None:
        while True:
            self.check()
            await asyncio.sleep(period)


def _load_pair(context: ssl.SSLContext, pair: tuple[bytes, bytes]) -> None:
    """Into ``context``, but only once a scratch context loaded the same bytes: a pair that fails
    half-way must not leave the live context with a certificate and a key that do not match."""
    with tempfile.TemporaryDirectory(prefix="vbridge-tls-") as folder:
        cert, key = pathlib.Path(folder) / "tls.crt", pathlib.Path(folder) / "tls.key"
        cert.write_bytes(pair[0])
        key.touch(mode=0o600)
        key.write_bytes(pair[1])
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key)
        context.load_cert_chain(cert, key)


async def serve(app: App, *, started: asyncio.Event | None = None) -> None:
    """Serve until cancelled, then close the listening socket and finish open requests."""
    srv = server(app)
    task = asyncio.create_task(srv.serve())
    reloading: asyncio.Task[None] | None = None
    try:
        while not srv.started and not task.done():
            await asyncio.sleep(0.01)
        s = app.settings
        if srv.started and s.certfile and s.keyfile and isinstance(srv.config.ssl, ssl.SSLContext):
            reloader = CertReloader(srv.config.ssl, s.certfile, s.keyfile)
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
        if reloading is not None:
            reloading.cancel()
            await asyncio.gather(reloading, return_exceptions=True)
