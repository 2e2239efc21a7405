"""Connection limits below the ASGI app: a connection cap, a request-head deadline, a head size cap.

uvicorn (0.54, httptools) has a keep-alive timeout and ``limit_concurrency`` (a 503 *after* the
request was read), but no bound on the time or the bytes of a request head, nor on the
connections held open: a client that opens TLS and never finishes a handshake or its headers
stays for ever, and httptools keeps a header it has not finished in memory, however big.
:class:`GuardedProtocol` is uvicorn's httptools protocol with those bounds, and it runs TLS
itself (the loop's own TLS layer, put in at accept) so that both happen before any TLS work:

- **connection cap**: a TCP connection beyond ``max_connections`` open ones (handshaking,
  reading, idle keep-alive) is reset at once, before its handshake; those already open go on;
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
import ssl
from asyncio import sslproto
from typing import Any, ClassVar

import uvloop
import uvloop.loop
from uvicorn.protocols.http import httptools_impl

__all__ = ["Gate", "GuardedProtocol", "Limits", "protocol_class"]

log = logging.getLogger(__name__)

_END = b"\r\n\r\n"


@dataclasses.dataclass(frozen=True)
class Limits:
    header_timeout: float
    max_header_bytes: int
    max_connections: int


class Gate:
    """What the connections of one server share: limits, TLS context, the count of open ones."""

    def __init__(self, limits: Limits, context: ssl.SSLContext | None) -> None:
        self.limits = limits
        self.context = context
        self.open = 0  # connections holding a slot (from accept to close)
        self.refused = 0  # connections reset at accept because the cap was reached
        self.expired = 0  # connections aborted at the head deadline
        self.too_large = 0  # heads answered 431


def protocol_class(gate: Gate) -> type[GuardedProtocol]:
    """The protocol class uvicorn instantiates per connection (``Config(http=...)``), bound to ``gate``."""
    bound: type[GuardedProtocol] = type("BoundGuardedProtocol", (GuardedProtocol,), {"gate": gate})
    return bound


class GuardedProtocol(httptools_impl.HttpToolsProtocol):
    gate: ClassVar[Gate]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._raw: asyncio.Transport | None = None
        self._slot = False
        self._deadline: asyncio.TimerHandle | None = None
        self._head: int | None = 0  # bytes of the request head read so far; None while a body is read
        self._tail = b""  # the last bytes of the head so far, to find a CRLFCRLF split across reads
        self._done = False  # refused, expired or answered 431: read nothing more

    # Connection life

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if self._raw is not None:  # the second call: from the TLS layer, once the handshake is done
            self._connected(transport)
            return
        gate = self.gate
        if gate.open >= gate.limits.max_connections:
            gate.refused += 1
            self._done = True
            transport.abort()  # before any TLS work: a reset, not a queue
            return
        gate.open += 1
        self._slot = True
        self._raw = transport
        self._arm()
        if gate.context is None:
            self._connected(transport)
        else:
            self._start_tls(transport, gate.context)

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
        if self._slot:
            self._slot = False
            self.gate.open -= 1

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
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head = 0  # what comes next is the head of the next request


def _peer(transport: asyncio.BaseTransport | None) -> str:
    peer = transport.get_extra_info("peername") if transport is not None else None
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "?"
