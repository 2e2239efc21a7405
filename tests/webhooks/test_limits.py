"""The server's connection limits, from outside: a server process on uvloop, clients on loopback.

Numbers printed here (memory held) are measurements for the record; the assertions are about
behaviour: who is disconnected, who is answered what, and that memory stays bounded.
"""

from __future__ import annotations

import contextlib
import pathlib
import socket
import ssl
import time
import warnings
from collections.abc import Iterator

import pytest

from tests.builders import kubeflow as kf
from tests.support import admission as support
from tests.support import serverproc
from vbridge.localcluster import certs, cluster

HEADER_TIMEOUT = 1.0


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[certs.KeyPair, certs.KeyPair]:
    folder = tmp_path_factory.mktemp("tls")
    ca = certs.make_pki(folder).ca
    return ca, certs.issue_from(ca, folder, "webhook", common_name="volcano-bridge", hosts=("127.0.0.1",))


@pytest.fixture(scope="module")
def proc(pki: tuple[certs.KeyPair, certs.KeyPair]) -> Iterator[serverproc.ServerProcess]:
    with serverproc.ServerProcess(
        pki[1], cluster.free_port(), header_timeout=HEADER_TIMEOUT, max_connections=64
    ) as running:
        yield running


def _tls(proc: serverproc.ServerProcess, ca: certs.KeyPair, timeout: float = 10) -> ssl.SSLSocket:
    ctx = ssl.create_default_context(cafile=str(ca.cert))
    raw = socket.create_connection(("127.0.0.1", proc.port), timeout=timeout)
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1")


def _closed_after(sock: socket.socket) -> float:
    """Seconds until the server closes ``sock`` (EOF or reset); the socket's timeout bounds the wait."""
    started = time.monotonic()
    with contextlib.suppress(ConnectionError, ssl.SSLError):
        while sock.recv(65536):
            pass
    return time.monotonic() - started


def _get(sock: ssl.SSLSocket, path: str = "/healthz", body: bytes = b"", method: str = "GET") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    sock.sendall(head + body)
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += sock.recv(65536)
    head_part, rest = reply.split(b"\r\n\r\n", 1)
    length = int(next(h for h in head_part.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1])
    while len(rest) < length:
        rest += sock.recv(65536)
    return head_part.split(b"\r\n", 1)[0] + b"\r\n\r\n" + rest


def test_a_partial_head_is_disconnected_after_the_header_timeout(
    proc: serverproc.ServerProcess, pki: tuple[certs.KeyPair, certs.KeyPair]
) -> None:
    with _tls(proc, pki[0]) as tls:
        tls.sendall(b"POST /mutate/kubeflow-org-tfjob HTTP/1.1\r\nHost: x\r\n")
        waited = _closed_after(tls)
    assert HEADER_TIMEOUT * 0.5 < waited < HEADER_TIMEOUT + 3


@pytest.mark.parametrize("first_bytes", [b"", b"\x16\x03\x01\x02\x00\x01"], ids=["silent", "half-a-client-hello"])
def test_a_tls_handshake_never_finished_is_disconnected_within_the_same_bound(
    proc: serverproc.ServerProcess, first_bytes: bytes
) -> None:
    with socket.create_connection(("127.0.0.1", proc.port), timeout=10) as raw:
        raw.sendall(first_bytes)
        waited = _closed_after(raw)
    assert HEADER_TIMEOUT * 0.5 < waited < HEADER_TIMEOUT + 3


def test_a_trickled_head_does_not_restart_the_clock(
    proc: serverproc.ServerProcess, pki: tuple[certs.KeyPair, certs.KeyPair]
) -> None:
    with _tls(proc, pki[0]) as tls:
        started = time.monotonic()
        tls.sendall(b"GET /healthz HTTP/1.1\r\n")
        with contextlib.suppress(ConnectionError, ssl.SSLError):
            for _ in range(int(HEADER_TIMEOUT * 20) + 40):  # one header byte every 50 ms, for 3 s
                tls.sendall(b"X")
                time.sleep(0.05)
        closed = _closed_after(tls) + (time.monotonic() - started)
    assert closed < HEADER_TIMEOUT + 3 - 0.5


def test_a_kept_alive_connection_gets_a_new_clock_per_request(
    proc: serverproc.ServerProcess, pki: tuple[certs.KeyPair, certs.KeyPair]
) -> None:
    with _tls(proc, pki[0]) as tls:
        for _ in range(3):  # three requests over three header timeouts: each head was in time
            assert _get(tls).startswith(b"HTTP/1.1 200")
            time.sleep(HEADER_TIMEOUT * 0.6)
        tls.sendall(b"GET /healthz HTTP/1.1\r\n")  # then a head left unfinished
        assert _closed_after(tls) < HEADER_TIMEOUT + 3


def test_a_head_over_64_kib_is_answered_431_and_closed(
    proc: serverproc.ServerProcess, pki: tuple[certs.KeyPair, certs.KeyPair]
) -> None:
    with _tls(proc, pki[0]) as tls:
        assert _get(tls, body=b"", path="/healthz" + "?" + "a" * 60_000).startswith(b"HTTP/1.1 200")  # 60 KB: fine
    with _tls(proc, pki[0]) as tls:
        with contextlib.suppress(ConnectionError, ssl.SSLError):  # the server may close while we still send
            tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1024 * 1024))
        reply = b""
        with contextlib.suppress(ConnectionError, ssl.SSLError):
            while chunk := tls.recv(65536):
                reply += chunk
    assert reply.startswith(b"HTTP/1.1 431 Request Header Fields Too Large")
    assert b"larger than 65536 bytes" in reply


def test_eight_slow_huge_heads_hold_little_memory(
    proc: serverproc.ServerProcess, pki: tuple[certs.KeyPair, certs.KeyPair]
) -> None:
    """The finding: eight unfinished 64 MiB headers held 500 MB. Now each is cut at 64 KiB."""
    before = proc.rss()
    socks = [_tls(proc, pki[0], timeout=HEADER_TIMEOUT + 5) for _ in range(8)]
    sent = [0] * 8
    try:
        for s in socks:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
        peak = before
        cut = [False] * 8
        for _ in range(64 * 16):  # up to 64 MiB each, 64 KiB at a time
            for i, s in enumerate(socks):
                if cut[i]:
                    continue
                try:
                    s.sendall(b"a" * 65536)
                    sent[i] += 65536
                except (ConnectionError, ssl.SSLError):
                    cut[i] = True
            peak = max(peak, proc.rss())
            if all(cut):
                break
            time.sleep(0.01)
        replies = []
        for s in socks:
            with contextlib.suppress(ConnectionError, ssl.SSLError):
                replies.append(s.recv(65536))
    finally:
        for s in socks:
            s.close()
    print(f"\nRSS before {before / 2**20:.1f} MiB, peak {peak / 2**20:.1f} MiB; sent before the cut: {sent}")
    assert all(cut), "every huge head was cut off"
    assert max(sent) < 16 * 2**20  # of the 64 MiB offered: what loopback socket buffers took in before the cut
    assert peak - before < 32 * 2**20
    assert any(r.startswith(b"HTTP/1.1 431") for r in replies)


def test_the_connection_cap_refuses_new_connections_and_keeps_open_ones(
    pki: tuple[certs.KeyPair, certs.KeyPair],
) -> None:
    ca = pki[0]
    with serverproc.ServerProcess(pki[1], cluster.free_port(), header_timeout=30, max_connections=4) as capped:
        held = [_tls(capped, ca) for _ in range(3)]
        half_open = socket.create_connection(("127.0.0.1", capped.port), timeout=10)  # the 4th: mid-handshake
        try:
            for s in held:
                assert _get(s).startswith(b"HTTP/1.1 200")
            # The fifth is reset at accept: before TLS, answered at once, not queued.
            with socket.create_connection(("127.0.0.1", capped.port), timeout=5) as fifth:
                waited = _closed_after(fifth)
            assert waited < 4  # the socket timeout (5 s) would have raised: it was closed, not kept waiting
            with pytest.raises((ConnectionError, ssl.SSLError)):
                _tls(capped, ca, timeout=5).close()
            # Open connections go on: health checks and reviews.
            review = support.review(kf.tfjob("mnist", Worker=kf.replica(2)), kind=support.TF)
            for s in held:
                assert _get(s).startswith(b"HTTP/1.1 200")
                out = _get(s, support.TF_PATH, review, method="POST")
                assert out.startswith(b"HTTP/1.1 200") and b'"allowed":true' in out
            # A slot freed is a slot to take.
            held.pop().close()
            deadline = time.monotonic() + 5
            while True:
                try:
                    with _tls(capped, ca, timeout=5) as again:
                        assert _get(again).startswith(b"HTTP/1.1 200")
                    break
                except (ConnectionError, ssl.SSLError):
                    assert time.monotonic() < deadline, "the freed slot was not given back"
                    time.sleep(0.1)
        finally:
            half_open.close()
            for s in held:
                s.close()


def _handshake(proc: serverproc.ServerProcess, ctx: ssl.SSLContext) -> str:
    with (
        socket.create_connection(("127.0.0.1", proc.port), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        return f"{tls.version()} {tls.cipher()[0]}"  # type: ignore[index]


def _client(ca: pathlib.Path, *, version: ssl.TLSVersion, ciphers: str = "") -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca))
    with warnings.catch_warnings():  # TLS 1.0/1.1 are deprecated: exactly what a test of their refusal uses
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version = ctx.maximum_version = version
    if ciphers:
        ctx.set_ciphers(ciphers + ":@SECLEVEL=0")  # the client offers it; the server must be the one to say no
    return ctx


def test_tls_1_2_aead_and_1_3_are_served(
    proc: serverproc.ServerProcess, pki: tuple[certs.KeyPair, certs.KeyPair]
) -> None:
    ca = pki[0].cert  # the serving key is ECDSA P-256 (certs.issue_from)
    assert _handshake(proc, _client(ca, version=ssl.TLSVersion.TLSv1_3)).startswith("TLSv1.3")
    for cipher in ("ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305"):
        assert _handshake(proc, _client(ca, version=ssl.TLSVersion.TLSv1_2, ciphers=cipher)) == f"TLSv1.2 {cipher}"


@pytest.mark.parametrize(
    ("version", "ciphers"),
    [
        (ssl.TLSVersion.TLSv1_1, "ALL"),
        (ssl.TLSVersion.TLSv1, "ALL"),
        (ssl.TLSVersion.TLSv1_2, "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384:ECDHE-ECDSA-AES128-SHA256"),
        (ssl.TLSVersion.TLSv1_2, "ECDHE-ECDSA-NULL-SHA"),
    ],
    ids=["tls1.1", "tls1.0", "cbc-only", "null-cipher"],
)
def test_old_protocols_and_non_aead_ciphers_are_refused(
    proc: serverproc.ServerProcess, pki: tuple[certs.KeyPair, certs.KeyPair], version: ssl.TLSVersion, ciphers: str
) -> None:
    ctx = _client(pki[0].cert, version=version, ciphers=ciphers)
    with pytest.raises(ssl.SSLError) as refused:
        _handshake(proc, ctx)
    # The server hung up on (or alerted) a ClientHello that went out: not the client's own refusal to
    # offer (NO_PROTOCOLS_AVAILABLE, NO_CIPHERS_AVAILABLE are raised before anything is sent).
    reason = refused.value.reason or ""
    assert isinstance(refused.value, ssl.SSLEOFError) or "ALERT" in reason.upper(), refused.value
