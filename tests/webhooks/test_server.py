"""The HTTPS server itself, on loopback: limits, timeouts and health, with a real TLS client."""

from __future__ import annotations

import asyncio
import json
import pathlib
import socket
import ssl
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.builders import kubeflow as kf
from tests.support import admission as support
from tests.support import loopthread
from vbridge.localcluster import certs, cluster
from webhooks import reviews, server


@pytest.fixture(scope="module")
def https(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, pathlib.Path]]:
    folder = tmp_path_factory.mktemp("tls")
    pki = certs.make_pki(folder)
    serving = certs.issue_from(pki.ca, folder, "webhook", common_name="volcano-bridge", hosts=("127.0.0.1",))
    port = cluster.free_port()
    settings = server.Settings(port=port, certfile=serving.cert, keyfile=serving.key, read_timeout=0.5)

    async def main(ready: asyncio.Event) -> None:
        await server.serve(server.App(support.Facts(), settings), started=ready)

    thread = loopthread.LoopThread(main, "webhook-server").start()
    try:
        yield f"https://127.0.0.1:{port}", pki.ca.cert
    finally:
        thread.stop()


def test_health_and_not_found(https: tuple[str, pathlib.Path]) -> None:
    url, ca = https
    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca))) as http:
        assert http.get(url + "/healthz").json() == {"status": "ok"}
        assert http.get(url + "/readyz").json() == {"ready": True}
        assert http.get(url + "/nope").status_code == 404


def test_review_round_trip_over_tls(https: tuple[str, pathlib.Path]) -> None:
    url, ca = https
    job = kf.tfjob("mnist", Worker=kf.replica(2))
    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca))) as http:
        out = http.post(url + "/mutate/kubeflow-org-tfjob", content=support.review(job, kind=support.TF))
    assert out.status_code == 200
    assert out.json()["response"]["allowed"] is True and out.json()["response"]["patchType"] == "JSONPatch"


def test_body_over_3_mib_is_refused_on_bytes_read(https: tuple[str, pathlib.Path]) -> None:
    url, ca = https

    def chunks() -> Iterator[bytes]:  # no Content-Length: the cap must hold on what is read
        for _ in range(4):
            yield b" " * (1024 * 1024)

    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca))) as http:
        out = http.post(url + "/mutate/kubeflow-org-tfjob", content=chunks())
    assert out.status_code == 413 and "3 MiB" in out.json()["error"]
    assert reviews.MAX_BODY == 3 * 1024 * 1024


def test_slow_client_times_out(https: tuple[str, pathlib.Path]) -> None:
    url, ca = https
    host, port = url.removeprefix("https://").split(":")
    ctx = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection((host, int(port)), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname=host) as tls,
    ):
        tls.sendall(b"POST /mutate/kubeflow-org-tfjob HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        started = time.monotonic()
        reply = ""
        while not reply.endswith("}"):
            chunk = tls.recv(4096).decode()
            if not chunk:
                break
            reply += chunk
    assert reply.startswith("HTTP/1.1 408") and time.monotonic() - started < 3
    assert json.loads(reply.split("\r\n\r\n", 1)[1]) == {"error": "request body not received in time"}


def _swap(folder: pathlib.Path, stamp: str, cert: bytes, key: bytes) -> None:
    """Write a pair as the kubelet updates a mounted Secret: a new folder, then one symlink swap."""
    fresh = folder / stamp
    fresh.mkdir()
    (fresh / "tls.crt").write_bytes(cert)
    (fresh / "tls.key").write_bytes(key)
    (folder / "..tmp").symlink_to(stamp)
    (folder / "..tmp").replace(folder / "..data")
    for name in ("tls.crt", "tls.key"):
        if not (folder / name).is_symlink():
            (folder / name).symlink_to(f"..data/{name}")


def _served(port: int, ca: pathlib.Path) -> bytes:
    """The certificate a new connection gets (DER)."""
    ctx = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def _der(pem_path: pathlib.Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem_path.read_text())


def test_a_certificate_swapped_on_disk_is_served_to_new_connections(tmp_path: pathlib.Path) -> None:
    pki = certs.make_pki(tmp_path / "pki")
    first = certs.issue_from(pki.ca, tmp_path / "pki", "first", common_name="first", hosts=("127.0.0.1",))
    second = certs.issue_from(pki.ca, tmp_path / "pki", "second", common_name="second", hosts=("127.0.0.1",))
    mounted = tmp_path / "tls"
    mounted.mkdir()
    _swap(mounted, "..1", first.cert.read_bytes(), first.key.read_bytes())
    port = cluster.free_port()
    settings = server.Settings(port=port, certfile=mounted / "tls.crt", keyfile=mounted / "tls.key", reload_seconds=0.2)
    apps: list[server.App] = []

    async def main(ready: asyncio.Event) -> None:
        app = server.App(support.Facts(), settings)
        apps.append(app)
        await server.serve(app, started=ready)

    thread = loopthread.LoopThread(main, "webhook-reload").start()
    try:
        assert _served(port, pki.ca.cert) == _der(first.cert)
        with httpx.Client(verify=ssl.create_default_context(cafile=str(pki.ca.cert))) as kept:
            assert kept.get(f"https://127.0.0.1:{port}/healthz").status_code == 200  # a connection kept open
            swapped = time.monotonic()
            _swap(mounted, "..2", second.cert.read_bytes(), second.key.read_bytes())
            while _served(port, pki.ca.cert) != _der(second.cert):
                assert time.monotonic() - swapped < 3, "the new certificate was not served within 3 s"
                time.sleep(0.05)
            assert kept.get(f"https://127.0.0.1:{port}/healthz").status_code == 200  # still served
        # A broken pair (the first certificate with the second's key) is refused: the second stays.
        reloader = apps[0].reloader
        assert reloader is not None
        loaded = reloader.reloads
        _swap(mounted, "..3", first.cert.read_bytes(), second.key.read_bytes())
        time.sleep(1.0)  # five checks
        assert reloader.reloads == loaded
        assert _served(port, pki.ca.cert) == _der(second.cert)
        with httpx.Client(verify=ssl.create_default_context(cafile=str(pki.ca.cert))) as http:
            job = kf.tfjob("mnist", Worker=kf.replica(2))
            out = http.post(
                f"https://127.0.0.1:{port}/mutate/kubeflow-org-tfjob", content=support.review(job, kind=support.TF)
            )
            assert out.status_code == 200 and out.json()["response"]["allowed"] is True
        # Once the files are sound again, they are loaded.
        _swap(mounted, "..4", first.cert.read_bytes(), first.key.read_bytes())
        reverted = time.monotonic()
        while _served(port, pki.ca.cert) != _der(first.cert):
            assert time.monotonic() - reverted < 3
            time.sleep(0.05)
    finally:
        thread.stop()
