from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import pytest

from vbridge.localcluster import cluster
from vbridge.localcluster import probes as http_probes


class _Handler(http.server.BaseHTTPRequestHandler):
    def _answer(self) -> None:
        self.send_response(200 if self.path == "/ok" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def base() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join()


def test_status_answers_and_silence(base: str) -> None:
    assert http_probes.status(f"{base}/ok", timeout=1.0) == 200
    assert http_probes.status(f"{base}/nope", method="POST", body=b"{}", timeout=1.0) == 404
    assert http_probes.http_ok(f"{base}/ok") and not http_probes.http_ok(f"{base}/nope")
    assert http_probes.routed(f"{base}/ok") and not http_probes.routed(f"{base}/nope")
    closed = cluster.free_port()
    assert http_probes.status(f"http://127.0.0.1:{closed}/", timeout=1.0) is None
    assert not http_probes.routed(f"http://127.0.0.1:{closed}/")


def test_proxies_are_never_used(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # the discard port: a proxied probe fails
    monkeypatch.setenv("no_proxy", "")
    assert http_probes.http_ok(f"{base}/ok")


def test_port_free() -> None:
    port = cluster.free_port()
    assert http_probes.port_free(port)
    with socket.socket() as taken:
        taken.bind(("", port))
        taken.listen()
        assert not http_probes.port_free(port)
