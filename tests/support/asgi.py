"""Call an ASGI app (the webhook's ``server.App``) in-process: one POST, its status and body.

No socket and no TLS: what the server's HTTP handler does with a body, as fast as it can go, for
the fuzz tests that send it hundreds of thousands of requests.
"""

from __future__ import annotations

import asyncio
from typing import Any

from webhooks import server


class Caller:
    """``Caller(app).post(path, body)`` -> (status, body), on an event loop of its own (``close`` it)."""

    def __init__(self, app: server.App) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        return self.loop.run_until_complete(self._post(path, body))

    def post_all(self, path: str, bodies: list[bytes]) -> list[tuple[int, bytes]]:
        """Each body posted in turn on one run of the loop: a batch without a loop start per request."""
        return self.loop.run_until_complete(self._post_all(path, bodies))

    async def _post_all(self, path: str, bodies: list[bytes]) -> list[tuple[int, bytes]]:
        return [await self._post(path, body) for body in bodies]

    async def _post(self, path: str, body: bytes) -> tuple[int, bytes]:
        scope = {"type": "http", "method": "POST", "path": path, "headers": [(b"content-type", b"application/json")]}
        sent = False
        status, chunks = 0, []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.Event().wait()  # the client stays; the app never asks again
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                chunks.append(bytes(message.get("body", b"")))

        await self.app(scope, receive, send)
        return status, b"".join(chunks)

    def close(self) -> None:
        self.loop.close()
