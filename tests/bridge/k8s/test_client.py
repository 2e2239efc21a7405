"""The client against a real HTTP server on loopback: which answers it sends again, and when; and
which Python versions need aiohttp to abort the TLS connections it closed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from aiohttp import web

from bridge import defaults, errors
from bridge.k8s import client, kubeconfigs

Answer = Callable[[int], web.Response]


def _run(
    answer: Answer, retries: int = 3, agents: list[str] | None = None, **options: str
) -> tuple[dict[str, object] | errors.ApiError, int]:
    """Send one GET to a server whose n-th answer is ``answer(n)``; what came back, and how many
    requests the server saw (``agents``: their User-Agent headers are added to it)."""
    seen = 0

    async def handle(request: web.Request) -> web.Response:
        nonlocal seen
        seen += 1
        if agents is not None:
            agents.append(request.headers.get("User-Agent", ""))
        return answer(seen)

    async def main() -> dict[str, object] | errors.ApiError:
        app = web.Application()
        app.router.add_get("/api/v1/namespaces", handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        conn = kubeconfigs.Connection(server=f"http://127.0.0.1:{port}", ca_file=None, cert_file=None, key_file=None)
        try:
            async with client.Client(conn, retries=retries, **options) as api:
                return await api.request("GET", "/api/v1/namespaces")
        except errors.ApiError as exc:
            return exc
        finally:
            await runner.cleanup()

    return asyncio.run(main()), seen


def _status(code: int, retry_after: str | None = None) -> web.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    body = f'{{"kind":"Status","reason":"TooManyRequests","message":"answer {code}"}}'
    return web.Response(status=code, text=body, content_type="application/json", headers=headers)


def _ok() -> web.Response:
    return web.Response(text='{"kind":"NamespaceList","items":[]}', content_type="application/json")


def test_a_429_with_retry_after_is_sent_again_until_it_is_answered() -> None:
    """The apiserver's "storage is (re)initializing": 429 with Retry-After, then the answer."""
    out, seen = _run(lambda n: _status(429, "0") if n <= 2 else _ok())
    assert out == {"kind": "NamespaceList", "items": []}
    assert seen == 3


@pytest.mark.parametrize("options", [{}, {"user_agent": "vbridge-scheduler"}])
def test_each_request_names_its_component_as_its_user_agent(options: dict[str, str]) -> None:
    agents: list[str] = []
    _run(lambda n: _ok(), agents=agents, **options)
    assert agents == [options.get("user_agent", defaults.USER_AGENT)]


@pytest.mark.parametrize("code", [500, 503])
def test_a_5xx_with_retry_after_is_sent_again_at_most_retries_times(code: int) -> None:
    out, seen = _run(lambda _: _status(code, "0"), retries=2)
    assert isinstance(out, errors.ApiError)
    assert (out.status, out.message) == (code, f"answer {code}")
    assert seen == 3


@pytest.mark.parametrize(
    ("code", "retry_after"),
    [(429, None), (429, "Wed, 21 Oct 2026 07:28:00 GMT"), (409, "0"), (404, "0"), (500, None)],
)
def test_other_errors_are_answered_at_once(code: int, retry_after: str | None) -> None:
    out, seen = _run(lambda _: _status(code, retry_after))
    assert isinstance(out, errors.ApiError)
    assert out.status == code
    assert seen == 1


def test_the_wait_is_the_one_the_server_asks_for() -> None:
    arrivals: list[float] = []

    def answer(n: int) -> web.Response:
        arrivals.append(time.monotonic())
        return _status(429, "1") if n == 1 else _ok()

    out, _ = _run(answer)
    assert out == {"kind": "NamespaceList", "items": []}
    assert arrivals[1] - arrivals[0] >= 0.9


@pytest.mark.parametrize(
    ("status", "value", "wait"),
    [(429, "3", 3.0), (503, "0", 0.0), (429, "600", client.RETRY_AFTER_CAP), (429, "-4", 0.0), (404, "1", None)],
)
def test_retry_after_is_read_as_seconds_and_capped(status: int, value: str, wait: float | None) -> None:
    assert client._retry_after(status, {"Retry-After": value}) == wait


@pytest.mark.parametrize(
    ("version", "needed"),
    [
        ((3, 11, 0), True),
        ((3, 11, 2), False),  # the clean-up itself leaks there (Debian bookworm's Python)
        ((3, 11, 3), False),
        ((3, 11, 4), True),
        ((3, 11, 7), True),
        ((3, 12, 7), True),
        ((3, 12, 8), False),  # asyncio fixed
        ((3, 13, 0), True),
        ((3, 13, 1), False),
        ((3, 14, 0), False),
    ],
)
def test_closed_tls_connections_are_aborted_only_where_asyncio_keeps_them(
    version: tuple[int, int, int], needed: bool
) -> None:
    assert client.cleanup_closed(version) is needed


def test_requests_are_answered_while_more_watches_are_open_than_the_pool_has_connections() -> None:
    """A controller follows one watch per kind; each holds its connection for minutes. Were they
    in the requests' pool, as many watches as connections would leave every request waiting for
    one until it timed out (seen in CI: pod creates and PodGroup writes timing out for minutes)."""

    async def endless(request: web.Request) -> web.StreamResponse:
        stream = web.StreamResponse()
        await stream.prepare(request)
        await stream.write(b'{"type":"BOOKMARK","object":{}}\n')
        await asyncio.Event().wait()  # never ends, as a watch within its timeout
        return stream

    async def answer(request: web.Request) -> web.Response:
        return _ok()

    async def main() -> dict[str, object]:
        app = web.Application()
        app.router.add_get("/watch", endless)
        app.router.add_get("/api/v1/namespaces", answer)
        runner = web.AppRunner(app, shutdown_timeout=0.1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        conn = kubeconfigs.Connection(server=f"http://127.0.0.1:{port}", ca_file=None, cert_file=None, key_file=None)
        first_lines: list[asyncio.Future[bytes]] = []
        try:
            async with client.Client(conn, connections=2, timeout=5.0) as api:
                streams = [api.stream_lines("/watch", {}) for _ in range(4)]
                first_lines = [asyncio.ensure_future(anext(s)) for s in streams]
                lines = await asyncio.wait_for(asyncio.gather(*first_lines), 5.0)  # all four watches open
                assert lines == [b'{"type":"BOOKMARK","object":{}}\n'] * 4
                out = await asyncio.wait_for(api.request("GET", "/api/v1/namespaces"), 5.0)
                for s in streams:
                    await s.aclose()
                return out
        finally:
            await runner.cleanup()

    assert asyncio.run(main()) == {"kind": "NamespaceList", "items": []}
