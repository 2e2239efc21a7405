"""An async client for the kube-apiserver on aiohttp; one request function, one error mapping.

aiohttp rather than httpx: on the bind path (many small POSTs over a pool of keep-alive
connections) httpx's connection pool cost ~5 ms of CPU per request at 64 connections, aiohttp
~0.3 ms (measured against our local apiserver), and on 2 cores every millisecond the client
spends is one the apiserver does not get. Watches are streamed line by line on a session of
their own: a watch holds its connection for minutes, so in the requests' pool of ``connections``
enough watches (one per kind a controller follows) would leave requests none, and every request
would time out waiting for a connection while the watches looked healthy.

An answer of 429 or 5xx that carries ``Retry-After`` (the apiserver's "storage is
(re)initializing", its max-in-flight and priority-and-fairness limits) means the request was not
carried out: like client-go's rest client, the request is sent again after that many seconds
(at most ``RETRY_AFTER_CAP`` each), up to ``retries`` times, then the answer is the error.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import aiohttp
import orjson

from bridge import defaults, errors
from bridge.k8s import kubeconfigs

__all__ = [
    "CONNECTION_ERRORS",
    "JSON_PATCH",
    "MERGE",
    "RETRIES",
    "RETRY_AFTER_CAP",
    "STRATEGIC",
    "TRANSPORT_ERRORS",
    "Client",
    "cleanup_closed",
]

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
# A watch event is one line; objects are at most ~3 MiB, the reader allows lines of twice this.
_MAX_LINE = 4 * 1024 * 1024
# What a dropped or refused connection raises (besides errors.ApiError for an answered request);
# CONNECTION_ERRORS leaves out other OSErrors (a file that cannot be read), for callers that tell them apart.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (aiohttp.ClientError, ConnectionError, asyncio.TimeoutError)
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (*CONNECTION_ERRORS, OSError)
# client-go's rest client: at most 10 retries of an answer with Retry-After, each wait capped.
RETRIES = 10
RETRY_AFTER_CAP = 10.0


def cleanup_closed(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> bool:
    """Whether the connector must abort the sockets of the TLS connections it closes (aiohttp's
    ``enable_cleanup_closed``, by aiohttp's own rule). Before CPython 3.12.8, and in 3.13.0, asyncio
    keeps a closed TLS connection whose peer never completes the TLS shutdown (a proxy cut off, a
    reset mid-close) with its 256 KiB read buffer for good (cpython#118960); 3.11.1 to 3.11.3 leak
    through that very clean-up instead (cpython#98539), so there it stays off."""
    needed = (3, 13, 0) <= version < (3, 13, 1) or version < (3, 12, 8)
    return needed and not (3, 11, 1) <= version < (3, 11, 4)


def _loads(data: bytes) -> Any:
    """orjson: several times faster than the stdlib on watch events and lists. Like the apiserver's
    own decoding of unstructured objects, integers beyond 64 bits come back as floats."""
    return orjson.loads(data)


def _error(status: int, reason: str, body: bytes) -> errors.ApiError:
    try:
        parsed = _loads(body)
        if not isinstance(parsed, dict):
            raise ValueError
        message = parsed.get("message", body[:500].decode(errors="replace"))  # never a whole object
        return errors.ApiError(status, parsed.get("reason", ""), message)
    except ValueError:
        return errors.ApiError(status, reason, body[:500].decode(errors="replace"))


def _retry_after(status: int, headers: Mapping[str, str]) -> float | None:
    """Seconds to wait before sending again, or None: not a "come back later" answer."""
    if status != 429 and status < 500:
        return None
    value = headers.get("Retry-After", "")
    try:
        seconds = int(value)
    except ValueError:
        return None  # absent, or an HTTP date (the apiserver always sends seconds)
    return min(max(seconds, 0), RETRY_AFTER_CAP)


def _query(params: Mapping[str, Any] | None) -> dict[str, str] | None:
    """Query values as the apiserver reads them: booleans lower-case, None left out."""
    if not params:
        return None
    return {
        k: ("true" if v else "false") if isinstance(v, bool) else str(v) for k, v in params.items() if v is not None
    }


class Client:
    """``async with Client(conn) as api: await api.request("GET", "/api/v1/nodes")``.

    The HTTP session is made on first use, inside the event loop that uses it. ``watch_timeout``:
    how long the server keeps each watch open before it ends it (and it is resumed); a test may
    shorten it to see many normal ends and bookmarks.
    """

    def __init__(
        self,
        conn: kubeconfigs.Connection,
        *,
        connections: int = 16,
        timeout: float = 30.0,
        retries: int = RETRIES,
        user_agent: str = defaults.USER_AGENT,
        watch_timeout: int = defaults.WATCH_TIMEOUT_SECONDS,
    ) -> None:
        """``user_agent``: who is asking, as the apiserver's audit log and metrics name it (kubectl
        and client-go send their program's name the same way)."""
        self._retries = retries
        self.watch_timeout = watch_timeout  # the timeoutSeconds each watch on this client asks for
        self._server = conn.server.rstrip("/")
        self._ssl = conn.ssl_context() if self._server.startswith("https:") else None
        self._headers = {"User-Agent": user_agent}
        if conn.token:
            self._headers["Authorization"] = f"Bearer {conn.token}"
        self._connections = connections
        self._timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=5.0)
        self._stream_timeout = aiohttp.ClientTimeout(total=None, sock_connect=5.0, sock_read=None)
        self._session: aiohttp.ClientSession | None = None
        self._watches: aiohttp.ClientSession | None = None  # the streams' own, with no cap: one per watch

    def _new_session(self, limit: int) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            ssl=self._ssl if self._ssl is not None else False,
            limit=limit,
            enable_cleanup_closed=self._ssl is not None and cleanup_closed(),
        )
        return aiohttp.ClientSession(
            connector=connector, headers=self._headers, timeout=self._timeout, read_bufsize=_MAX_LINE
        )

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = self._new_session(self._connections)
        return self._session

    def _streams(self) -> aiohttp.ClientSession:
        if self._watches is None:
            self._watches = self._new_session(0)  # 0: unlimited; the code bounds its watches, not the pool
        return self._watches

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        sessions = [s for s in (self._session, self._watches) if s is not None]
        self._session = self._watches = None
        for session in sessions:
            await session.close()

    async def warm(self) -> None:
        """Open every connection of the pool now (cheap ``GET /version`` requests, all at once), so
        a later burst does not pay for the TLS handshakes. Failures are left to later requests."""
        probes = [self.request("GET", "/version") for _ in range(self._connections)]
        await asyncio.gather(*probes, return_exceptions=True)

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        content_type: str = "application/json",
        decode: Callable[[bytes], dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The decoded answer (``decode``: how, e.g. a ``views.View``'s ``list``; default whole)."""
        content = None if body is None else orjson.dumps(body)
        for attempt in range(self._retries + 1):
            async with self._http().request(
                method,
                self._server + path,
                data=content,
                params=_query(params),
                headers={"Content-Type": content_type} if content is not None else None,
            ) as response:
                data = await response.read()
                status, reason, wait = response.status, response.reason or "", None
                if status >= 400:
                    wait = _retry_after(status, response.headers)
            if status < 400:
                out: dict[str, Any] = (decode or _loads)(data) if data else {}
                return out
            if wait is None or attempt == self._retries:
                break
            await asyncio.sleep(wait)
        raise _error(status, reason, data)

    async def stream_lines(
        self, path: str, params: dict[str, Any], *, silence: float | None = None
    ) -> AsyncIterator[bytes]:
        """Each non-empty line of a streaming (watch) response, undecoded (so that a caller can
        skip one it cannot decode and read on). Its end is left to the server; with ``silence``, a
        stream that brings nothing for that many seconds raises ``TimeoutError``."""
        url = self._server + path
        timeout = (
            self._stream_timeout
            if silence is None
            else aiohttp.ClientTimeout(None, sock_connect=5.0, sock_read=silence)
        )
        async with self._streams().get(url, params=_query(params), timeout=timeout) as response:
            if response.status >= 400:
                raise _error(response.status, response.reason or "", await response.read())
            async for line in response.content:
                if line.strip():
                    yield line
