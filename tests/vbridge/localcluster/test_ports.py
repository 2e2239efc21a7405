"""``vbridge up --port P`` right after a run on P stopped: the port is free (SO_REUSEADDR), a listened one is not."""

from __future__ import annotations

import socket

import pytest

from bridge import errors
from vbridge.localcluster import cluster


def _time_wait_port() -> int:
    """A loopback port whose server side closed first, as a stopped apiserver leaves it: TIME_WAIT."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = int(server.getsockname()[1])
    peer = socket.create_connection(("127.0.0.1", port))
    accepted, _ = server.accept()
    accepted.close()  # the server's end closes first: it is the one left in TIME_WAIT
    server.close()
    peer.recv(1)
    peer.close()
    return port


def test_a_port_in_time_wait_is_claimed() -> None:
    port = _time_wait_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as plain, pytest.raises(OSError):
        plain.bind(("127.0.0.1", port))  # what the probe did before: "taken"
    assert cluster.claim(port, "kube-apiserver") == port


def test_a_listened_port_is_taken() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = int(busy.getsockname()[1])
        with pytest.raises(errors.PortInUseError, match=f"kube-apiserver port {port} on 127.0.0.1 is taken"):
            cluster.claim(port, "kube-apiserver")
