"""The webhook server alone in a child process, on uvloop as ``vbridge serve`` runs it, so a test
can measure it from outside (its resident memory) and reach it only over loopback.

``python -m tests.support.serverproc PORT CERT KEY HEADER_TIMEOUT MAX_CONNECTIONS MAX_PENDING [CLIENT_CA]``
serves :class:`tests.support.admission.Facts` until SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import signal
import socket
import subprocess
import sys
import time
from types import TracebackType

import uvloop

from bridge import defaults
from tests.support import admission as support
from vbridge.localcluster import certs as cluster_certs
from webhooks import server

ROOT = pathlib.Path(__file__).resolve().parents[2]


class ServerProcess:
    def __init__(
        self,
        serving: cluster_certs.KeyPair,
        port: int,
        *,
        header_timeout: float,
        max_connections: int,
        max_pending: int = defaults.MAX_PENDING_CONNECTIONS,
        client_ca: str = "",
    ) -> None:
        self.port = port
        limits = [str(header_timeout), str(max_connections), str(max_pending)]
        argv = [str(port), str(serving.cert), str(serving.key), *limits]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.serverproc", *argv, *([client_ca] if client_ca else [])],
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )

    def __enter__(self) -> ServerProcess:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "the server process exited"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.proc.kill()
        raise TimeoutError("the server process did not listen in 30 s")

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def rss(self) -> int:
        """Resident memory of the server, bytes."""
        for line in pathlib.Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS")


async def _main(settings: server.Settings) -> None:
    task = asyncio.create_task(server.serve(server.App(support.Facts(), settings)))
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


if __name__ == "__main__":
    port, cert, key, timeout, cap, pending, *ca = sys.argv[1:]
    uvloop.run(
        _main(
            server.Settings(
                port=int(port),
                certfile=pathlib.Path(cert),
                keyfile=pathlib.Path(key),
                header_timeout=float(timeout),
                max_connections=int(cap),
                max_pending=int(pending),
                client_ca=pathlib.Path(ca[0]) if ca else None,
            )
        )
    )
