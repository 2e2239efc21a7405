"""Child processes that never outlive us: own session, parent-death signal, logs to a file."""

from __future__ import annotations

import contextlib
import ctypes
import os
import pathlib
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import Self

from bridge import errors

__all__ = ["Process", "Started"]

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(OSError):  # not Linux: cleanup then relies on stop()
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    os.setsid()


class Process:
    """One component of the control plane. ``stop`` is idempotent and never raises."""

    def __init__(self, name: str, argv: Sequence[str], *, log: pathlib.Path) -> None:
        self.name = name
        self.argv = list(argv)
        self.log = log
        self._popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        if not pathlib.Path(self.argv[0]).exists():
            raise errors.BinaryMissingError(f"{self.name}: {self.argv[0]} does not exist; run tools/build-binaries.sh")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self._popen = subprocess.Popen(
                self.argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
            )

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    def alive(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def check_alive(self) -> None:
        if self._popen is not None and self._popen.poll() is not None:
            raise errors.StartupError(f"{self.name} exited with code {self._popen.returncode}", log_tail=self.tail())

    def stop(self, timeout: float = 10.0) -> None:
        popen, self._popen = self._popen, None
        if popen is None or popen.poll() is not None:
            return
        try:
            os.killpg(popen.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while popen.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(popen.pid, signal.SIGKILL)
            popen.wait(5)


class Started:
    """What ``start`` and ``stop``: ``with thing:`` starts it, and stops it however the block ends."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
