"""A tiny plain-HTTP server for probes and metrics: ``GET <path>`` → one handler's answer.

Used by the scheduler (``/metrics``, ``/healthz``) and the controllers (``/healthz``, ``/readyz``),
which have no web framework of their own. Each connection is one request, read with a timeout
(a stalled client is dropped), answered and closed. A handler returns ``(status, content type,
body)``; an unknown path is 404.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping

__all__ = ["READ_TIMEOUT", "Answer", "Handler", "check", "serve"]

Answer = tuple[int, str, bytes]
Handler = Callable[[], Answer]
_REASONS = {200: "OK", 404: "Not Found", 503: "Service Unavailable"}
READ_TIMEOUT = 5.0


def check(ok: bool, *, bad: bytes = b"not ok") -> Answer:
    """A probe's answer: 200 "ok", or 503 with ``bad``."""
    return (200, "text/plain", b"ok") if ok else (503, "text/plain", bad)


async def serve(
    routes: Mapping[str, Handler], *, host: str, port: int, on_bound: Callable[[int], None] | None = None
) -> None:
    """Serve until cancelled; ``port`` 0 picks a free one, told to ``on_bound``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), READ_TIMEOUT)
            while (await asyncio.wait_for(reader.readline(), READ_TIMEOUT)) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.decode("latin-1").split()
            handler = routes.get(parts[1].split("?")[0] if len(parts) > 1 else "")
            status, kind, body = handler() if handler is not None else (404, "text/plain", b"not found")
            head = (
                f"HTTP/1.1 {status} {_REASONS.get(status, '')}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    server = await asyncio.start_server(handle, host, port)
    if on_bound is not None:
        on_bound(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()
