"""Connection limits below the ASGI app: caps a silent client cannot fill, a request-head deadline
from accept, a head size cap.

uvicorn (0.55, httptools) has a keep-alive timeout and ``limit_concurrency`` (a 503 *after* the
request was read), but no bound on the time or the bytes of a request head, nor on the
connections held open: a client that opens TLS and never finishes a handshake or its headers
stays for ever, and httptools keeps a header it has not finished in memory, however big.
:class:`GuardedProtocol` is uvicorn's httptools protocol with those bounds, and it runs TLS
itself (the loop's own TLS layer, put in at accept) so that both happen before any TLS work.

**Who gets a connection.** One global cap on open connections let anyone who reaches the port
lock admission out: 256 raw sockets that never sent a byte held every slot, even with
``--client-ca``, and the apiserver's calls were refused. Per-client caps do not fix it here:
the apiserver is one client (one address, on loopback or behind a node's SNAT the same address
as other callers) with many connections, so a cap per IP throttles it or is void; and a client
certificate names a caller only after the handshake, which is where the attack is. So a
connection is counted by what it has done, in one of two pools:

- **fresh** (``max_pending``, ``defaults.MAX_PENDING_CONNECTIONS``): from the TCP accept until
  its first request head is complete, TLS handshake included. Accept never refuses: when the
  pool is full, its *oldest* connection is dropped for the new one. A silent connection is
  therefore gone after ``header_timeout`` or once ``max_pending`` newer ones came, while the
  apiserver's connection leaves the pool within milliseconds of accept (its ClientHello, then its
  request, are sent at once): pushing it out takes ``max_pending`` connections opened during
  its own handshake.
- **held** (``max_connections``): a connection that has sent a complete request head (with
  ``--client-ca``, only the apiserver can). When all are held and a new one completes a head,
  the connection idle longest (kept alive between requests, as the apiserver keeps its
  connections for reuse) is closed for it; only when every held connection is in the middle of
  a request is the new request answered 503 (``connection: close``). A request in flight is
  bounded in time by the server's body timeout and the review itself.

Open descriptors are at most ``max_pending + max_connections`` (plus the listener):
:func:`fit` raises the process's soft ``RLIMIT_NOFILE`` to hold them and ``RESERVED_FDS`` more,
or shrinks ``max_pending`` to what the hard limit allows.

- **head deadline**: from the TCP accept, the TLS handshake *and* the request head must be done
  within ``header_timeout`` seconds, else the connection is aborted; on a kept-alive
  connection the clock starts again with the first byte of the next request;
- **head size**: a head (request line and headers) over ``max_header_bytes`` is answered 431
  and the connection closed, counted on the bytes read, so at most that much is ever held.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import resource
import ssl
from asyncio import sslproto
from typing import Any, ClassVar

import uvloop
import uvloop.loop
from uvicorn.protocols.http import flow_control, httptools_impl

from bridge import defaults

__all__ = ["RESERVED_FDS", "Gate", "GuardedProtocol", "Limits", "fit", "protocol_class"]

log = logging.getLogger(__name__)

_END = b"\r\n\r\n"
RESERVED_FDS = 256  # descriptors besides the webhook's connections: the apiserver client, watches, files


@dataclasses.dataclass(frozen=True)
class Limits:
    header_timeout: float
    max_header_bytes: int
    max_connections: int  # held: connections that have sent a complete request head
    max_pending: int = defaults.MAX_PENDING_CONNECTIONS  # fresh: from accept to the first complete head


def fit(limits: Limits) -> Limits:
    """``limits`` within this process's descriptors: the soft ``RLIMIT_NOFILE`` raised (up to the
    hard one) to hold every connection they allow and ``RESERVED_FDS``; if the hard limit is lower,
    ``max_pending`` shrunk to what is left (at least 1), with a warning."""
    need = limits.max_pending + limits.max_connections + RESERVED_FDS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        soft = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    if soft == resource.RLIM_INFINITY or soft >= need:
        return limits
    pending = max(1, soft - RESERVED_FDS - limits.max_connections)
    log.warning(
        "open files are limited to %d: holding %d connections before their first request, not %d",
        soft,
        pending,
        limits.max_pending,
    )
    return dataclasses.replace(limits, max_pending=pending)


class Gate:
    """What the connections of one server share: limits, TLS context, the two pools, the counts."""

    def __init__(self, limits: Limits, context: ssl.SSLContext | None) -> None:
        self.limits = limits
        self.context = context
        # Insertion-ordered, so the first is the oldest: fresh by accept, idle by when it fell idle.
        self.fresh: dict[GuardedProtocol, None] = {}
        self.held: set[GuardedProtocol] = set()
        self.idle: dict[GuardedProtocol, None] = {}  # held, between requests
        self.dropped = 0  # fresh connections closed for a newer one (the fresh pool was full)
        self.reclaimed = 0  # idle held connections closed for a new request (every slot was held)
        self.refused = 0  # requests answered 503: every held connection was in the middle of one
        self.expired = 0  # connections aborted at the head deadline
        self.too_large = 0  # heads answered 431

    @property
    def open(self) -> int:
        """Connections in either pool (from accept to close)."""
        return len(self.fresh) + len(self.held)

    def enter(self, conn: GuardedProtocol) -> None:
        """A new connection, into the fresh pool; the oldest fresh one goes if the pool is full."""
        while len(self.fresh) >= self.limits.max_pending:
            self.dropped += 1
            next(iter(self.fresh)).drop("the fresh pool was full; newer connections came")
        self.fresh[conn] = None

    def hold(self, conn: GuardedProtocol) -> bool:
        """``conn`` has a complete request head: move it to the held pool (closing the longest idle
        one if it is full); False if every held connection is in the middle of a request."""
        if conn in self.held:
            self.idle.pop(conn, None)
            return True
        if len(self.held) >= self.limits.max_connections:
            if not self.idle:
                return False
            self.reclaimed += 1
            next(iter(self.idle)).drop("its slot was needed for a new request")
        self.fresh.pop(conn, None)
        self.held.add(conn)
        return True

    def rest(self, conn: GuardedProtocol) -> None:
        """``conn`` answered its request and waits for the next (kept alive)."""
        if conn in self.held:
            self.idle.pop(conn, None)
            self.idle[conn] = None

    def leave(self, conn: GuardedProtocol) -> None:
        self.fresh.pop(conn, None)
        self.held.discard(conn)
        self.idle.pop(conn, None)


def protocol_class(gate: Gate) -> type[GuardedProtocol]:
    """The protocol class uvicorn instantiates per connection (``Config(http=...)``), bound to ``gate``."""
    bound: type[GuardedProtocol] = type("BoundGuardedProtocol", (GuardedProtocol,), {"gate": gate})
    return bound


class GuardedProtocol(httptools_impl.HttpToolsProtocol):
    gate: ClassVar[Gate]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._raw: asyncio.Transport | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._head: int | None = 0  # bytes of the request head read so far; None while a body is read
        self._tail = b""  # the last bytes of the head so far, to find a CRLFCRLF split across reads
        self._done = False  # dropped, expired or answered 431: read nothing more

    # Connection life

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if self._raw is not None:  # the second call: from the TLS layer, once the handshake is done
            self._connected(transport)
            return
        gate = self.gate
        self._raw = transport
        gate.enter(self)
        self._arm()
        if gate.context is None:
            self._connected(transport)
        else:
            self._start_tls(transport, gate.context)

    def drop(self, why: str) -> None:
        """Close this connection now, for another: out of its pool at once, its socket aborted."""
        log.debug("closing a connection from %s: %s", _peer(self._raw), why)  # a flood must not flood the log
        self._done = True
        self._release()
        (self.transport or self._raw).abort()  # type: ignore[union-attr]

    def _start_tls(self, raw: asyncio.Transport, context: ssl.SSLContext) -> None:
        """What ``loop.start_tls`` does, but now: put the TLS layer between ``raw`` and us before a
        byte is read (start_tls would run a loop turn later, and the ClientHello reach us)."""
        waiter = self.loop.create_future()
        uv: Any = uvloop.loop  # a compiled module: its SSLProtocol is not in the stubs
        layer_class: Any = uv.SSLProtocol if isinstance(self.loop, uvloop.Loop) else sslproto.SSLProtocol
        layer = layer_class(
            self.loop,
            self,
            context,
            waiter,
            server_side=True,
            call_connection_made=True,
            ssl_handshake_timeout=self.gate.limits.header_timeout,
        )
        raw.set_protocol(layer)
        layer.connection_made(raw)
        waiter.add_done_callback(self._handshake_done)

    def _handshake_done(self, waiter: asyncio.Future[None]) -> None:
        failed = waiter.cancelled() or waiter.exception() is not None
        if failed or self.transport is None:  # the layer tells the app nothing of a failed handshake
            if not waiter.cancelled() and waiter.exception() is not None:
                log.debug("TLS handshake from %s failed: %s", _peer(self._raw), type(waiter.exception()).__name__)
            self._release()

    def _connected(self, transport: asyncio.Transport) -> None:
        if self._done:
            transport.abort()
            return
        super().connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        if self.transport is not None:  # reset at accept or lost mid-handshake: uvicorn never saw it
            super().connection_lost(exc)

    def _release(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self.gate.leave(self)

    # The head deadline

    def _arm(self) -> None:
        if self._deadline is None and not self._done:
            self._deadline = self.loop.call_later(self.gate.limits.header_timeout, self._expire)

    def _expire(self) -> None:
        self._deadline = None
        self._done = True
        self.gate.expired += 1
        log.info("closing a connection from %s: no complete request head in time", _peer(self._raw))
        (self.transport or self._raw).abort()  # type: ignore[union-attr]

    # Reading

    def data_received(self, data: bytes) -> None:
        if self._done:
            return
        reading_body = self._head is None and not (self.cycle is not None and self.cycle.response_complete)
        if not reading_body:
            self._arm()  # bytes no app is waiting for run on the head clock
        if self._head is not None:
            end = data.find(_END)
            if end < 0 and self._tail:
                joined = (self._tail + data[:3]).find(_END)
                end = joined - len(self._tail) if joined >= 0 else -1
            size = self._head + (len(data) if end < 0 else end + len(_END))
            if size > self.gate.limits.max_header_bytes:
                self._refuse_head()
                return
            if end < 0:
                self._head = size
                self._tail = (self._tail + data)[-3:] if len(data) < 3 else data[-3:]
        super().data_received(data)

    def _refuse_head(self) -> None:
        self._done = True
        self.gate.too_large += 1
        limit = self.gate.limits.max_header_bytes
        body = b'{"error":"request header fields larger than %d bytes"}' % limit
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)
        )
        self.transport.close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._head is not None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._head, self._tail = None, b""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if self.gate.hold(self):
            super().on_headers_complete()
            return
        self.gate.refused += 1  # every held connection is mid-request: 503, connection: close
        log.warning("answering 503 to %s: all %d connections are in a request", _peer(self._raw), len(self.gate.held))
        app, self.app = self.app, flow_control.service_unavailable
        try:
            super().on_headers_complete()
        finally:
            self.app = app

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head = 0  # what comes next is the head of the next request

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self.gate.rest(self)


def _peer(transport: asyncio.BaseTransport | None) -> str:
    peer = transport.get_extra_info("peername") if transport is not None else None
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "?"
