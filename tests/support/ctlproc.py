"""``python -m vbridge <command>`` as a child process against a test bed, with its log kept."""

from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Proc:
    def __init__(self, name: str, args: list[str], logs: pathlib.Path) -> None:
        self.name = name
        self.log = logs / f"{name}.log"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("POD_NAMESPACE", None)
        with self.log.open("wb") as out:
            self.popen = subprocess.Popen(
                [sys.executable, "-m", "vbridge", *args], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT
            )

    @property
    def identity(self) -> str:
        """Its Lease holderIdentity."""
        return f"{socket.gethostname()}_{self.popen.pid}"

    def kill(self) -> None:
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(10)

    def terminate(self, timeout: float = 15.0) -> int:
        self.popen.send_signal(signal.SIGTERM)
        return self.popen.wait(timeout)

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(10)

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def probe(url: str) -> int:
    """The status of a GET, 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


def wait_for(url: str, status: int, proc: Proc, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.popen.poll() is None, f"{proc.name} exited:\n{proc.tail()}"
        if probe(url) == status:
            return
        time.sleep(0.1)
    raise AssertionError(f"{url} did not answer {status} within {timeout:.0f} s:\n{proc.tail()}")


def probe_tls(port: int, path: str) -> int:
    """The status of a GET over TLS to 127.0.0.1 (not verified), 0 when nothing answers."""
    import ssl

    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", timeout=2, context=ctx) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0
