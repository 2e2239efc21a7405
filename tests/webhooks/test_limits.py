"""The server's connection limits, from outside: a server process on uvloop, clients on loopback.

Numbers printed here (memory held) are measurements for the record; the assertions are about
behaviour: who is disconnected, who is answered what, and that memory stays bounded.
"""

from __future__ import annotations

import contextlib
import pathlib
import selectors
import socket
import ssl
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator

import pytest

from tests.builders import kubeflow as kf
from tests.support import admission as support
from tests.support import serverproc
from vbridge.localcluster import certs as cluster_certs
from vbridge.localcluster import cluster

HEADER_TIMEOUT = 1.0
ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]:
    folder = tmp_path_factory.mktemp("tls")
    ca = cluster_certs.make_pki(folder).ca
    return ca, cluster_certs.issue_from(ca, folder, "webhook", common_name="volcano-bridge", hosts=("127.0.0.1",))


@pytest.fixture(scope="module")
def proc(pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]) -> Iterator[serverproc.ServerProcess]:
    with serverproc.ServerProcess(
        pki[1], cluster.free_port(), header_timeout=HEADER_TIMEOUT, max_connections=64
    ) as running:
        yield running


def _tls(proc: serverproc.ServerProcess, ca: cluster_certs.KeyPair, timeout: float = 10) -> ssl.SSLSocket:
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
    proc: serverproc.ServerProcess, pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]
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
    proc: serverproc.ServerProcess, pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]
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
    proc: serverproc.ServerProcess, pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]
) -> None:
    with _tls(proc, pki[0]) as tls:
        for _ in range(3):  # three requests over three header timeouts: each head was in time
            assert _get(tls).startswith(b"HTTP/1.1 200")
            time.sleep(HEADER_TIMEOUT * 0.6)
        tls.sendall(b"GET /healthz HTTP/1.1\r\n")  # then a head left unfinished
        assert _closed_after(tls) < HEADER_TIMEOUT + 3


def test_a_head_over_64_kib_is_answered_431_and_closed(
    proc: serverproc.ServerProcess, pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]
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
    proc: serverproc.ServerProcess, pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]
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


def _closed_by_server(socks: list[socket.socket], wait: float = 2.0) -> list[socket.socket]:
    """Those of ``socks`` the server has closed (EOF or reset), waiting up to ``wait`` s for more."""
    closed: list[socket.socket] = []
    with selectors.DefaultSelector() as sel:  # epoll: any descriptor number
        for s in socks:
            sel.register(s, selectors.EVENT_READ)
        deadline = time.monotonic() + wait
        while len(closed) < len(socks) and (left := deadline - time.monotonic()) > 0:
            for key, _ in sel.select(left):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                sel.unregister(sock)
                with contextlib.suppress(ConnectionError):
                    assert sock.recv(1) == b"", "a silent client was sent bytes"
                closed.append(sock)
    return closed


@pytest.fixture(scope="module")
def pooled(pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]) -> Iterator[serverproc.ServerProcess]:
    """Small pools and a long head timeout: what happens at the caps is the pools' doing, not the clock's."""
    with serverproc.ServerProcess(
        pki[1], cluster.free_port(), header_timeout=60, max_connections=4, max_pending=16
    ) as running:
        yield running


def test_silent_connections_cannot_fill_the_server(
    pooled: serverproc.ServerProcess, pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]
) -> None:
    """The finding: 256 sockets that never sent a byte held every slot and the apiserver was refused."""
    silent = [socket.create_connection(("127.0.0.1", pooled.port), timeout=10) for _ in range(100)]
    try:
        for _ in range(10):  # each also pushes one silent connection out as it comes in
            with _tls(pooled, pki[0]) as tls:
                assert _get(tls).startswith(b"HTTP/1.1 200")
        review = support.review(kf.tfjob("mnist", Worker=kf.replica(2)), kind=support.TF)
        with _tls(pooled, pki[0]) as tls:
            out = _get(tls, support.TF_PATH, review, method="POST")
        assert out.startswith(b"HTTP/1.1 200") and b'"allowed":true' in out
        # The fresh pool keeps the newest 16 of the 111 connections that came; the rest were closed.
        closed = _closed_by_server(silent)
        assert len(closed) >= 100 - 16, len(closed)
        assert silent[-1] not in closed  # the newest silent ones are still there, until the head timeout
    finally:
        for s in silent:
            s.close()


def test_the_longest_idle_connection_gives_way_to_a_new_request(
    pooled: serverproc.ServerProcess, pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]
) -> None:
    held = [_tls(pooled, pki[0]) for _ in range(4)]
    try:
        for s in held:  # in turn: held[0] has been idle longest
            assert _get(s).startswith(b"HTTP/1.1 200")
        with _tls(pooled, pki[0]) as fifth:
            assert _get(fifth).startswith(b"HTTP/1.1 200")
            assert _closed_by_server([held[0]], wait=5) == [held[0]]
            for s in held[1:]:  # the others go on
                assert _get(s).startswith(b"HTTP/1.1 200")
    finally:
        for s in held:
            s.close()


def test_when_every_held_connection_is_in_a_request_a_new_request_is_answered_503(
    pooled: serverproc.ServerProcess, pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]
) -> None:
    busy = [_tls(pooled, pki[0]) for _ in range(4)]
    try:
        for s in busy:  # held (answered once), then a head whose body never comes: in a request
            assert _get(s).startswith(b"HTTP/1.1 200")
            s.sendall(f"POST {support.TF_PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n".encode())
        with _tls(pooled, pki[0]) as fifth:
            reply = _get(fifth)
            assert reply.startswith(b"HTTP/1.1 503")
            assert _closed_by_server([fifth], wait=5) == [fifth]  # closed: it holds no slot
    finally:
        for s in busy:
            s.close()
    # Once those requests are gone, requests are served again.
    deadline = time.monotonic() + 10
    while True:
        with _tls(pooled, pki[0]) as again:
            reply = _get(again)
        if reply.startswith(b"HTTP/1.1 200"):
            break
        assert reply.startswith(b"HTTP/1.1 503") and time.monotonic() < deadline, reply


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
    proc: serverproc.ServerProcess, pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair]
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
    proc: serverproc.ServerProcess,
    pki: tuple[cluster_certs.KeyPair, cluster_certs.KeyPair],
    version: ssl.TLSVersion,
    ciphers: str,
) -> None:
    ctx = _client(pki[0].cert, version=version, ciphers=ciphers)
    with pytest.raises(ssl.SSLError) as refused:
        _handshake(proc, ctx)
    # The server hung up on (or alerted) a ClientHello that went out: not the client's own refusal to
    # offer (NO_PROTOCOLS_AVAILABLE, NO_CIPHERS_AVAILABLE are raised before anything is sent).
    reason = refused.value.reason or ""
    assert isinstance(refused.value, ssl.SSLEOFError) or "ALERT" in reason.upper(), refused.value


_FIT = """
import resource, sys
from webhooks import limits
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]), int(sys.argv[2])))
fitted = limits.fit(limits.Limits(5.0, 65536, max_connections=256, max_pending=1024))
print(fitted.max_pending, *resource.getrlimit(resource.RLIMIT_NOFILE))
"""


@pytest.mark.parametrize(
    ("soft", "hard", "expected"),
    [
        (1024, 4096, "1024 1536 4096"),  # raised to hold both pools and the reserve
        (600, 1000, "488 1000 1000"),  # the hard limit is lower: fewer fresh connections, not EMFILE at accept
        (8192, 8192, "1024 8192 8192"),  # enough already: left alone
    ],
)
def test_the_pools_fit_the_open_files_limit(soft: int, hard: int, expected: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _FIT, str(soft), str(hard)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split() == expected.split(), out.stderr
