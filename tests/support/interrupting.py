"""Ending a command at random moments: start it, send SIGINT or SIGTERM after a seeded random
delay, and see that it ended within the deadline with the shell's status, leaving no process.

``tries(default)`` is how many starts a test makes of each command: ``$VBRIDGE_SIGINT_TRIES``
(the issue's figure is 200), else the CI ``default``; ``rng(name)`` the delays' generator,
seeded from ``$VBRIDGE_SIGINT_SEED`` (default 31) and the command's name, so a failure is
replayed with the same delays. ``first_output`` measures how long a command takes to print (the
span to draw the moments over: start-up on a loaded machine takes seconds); ``interrupt`` makes
one try and returns its ``Outcome``; ``summary`` is the line a test prints for a series
(``pytest -s`` shows it).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import random
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Sequence

__all__ = [
    "DEADLINE",
    "SIGNALS",
    "VBRIDGE",
    "Outcome",
    "descendants",
    "first_output",
    "interrupt",
    "rng",
    "summary",
    "tries",
]

TRIES_ENV = "VBRIDGE_SIGINT_TRIES"
SEED_ENV = "VBRIDGE_SIGINT_SEED"
SIGNALS = (signal.SIGINT, signal.SIGTERM)
DEADLINE = 1.0  # seconds from the signal to the end of the command and of its children
VBRIDGE = (sys.executable, "-m", "vbridge.cli")


def tries(default: int) -> int:
    return int(os.environ.get(TRIES_ENV) or default)


def rng(name: str) -> random.Random:
    return random.Random(int(os.environ.get(SEED_ENV) or 31) * 1_000_003 + zlib.crc32(name.encode()))


@dataclasses.dataclass(frozen=True)
class Outcome:
    delay: float  # seconds from the start to the signal
    signum: int
    code: int | None  # None: still running after the deadline (then killed)
    took: float  # seconds from the signal to the end of the command
    phase: str  # what the command had shown when the signal came
    left: tuple[str, ...]  # its processes still alive after the deadline
    err: str

    def early(self) -> bool:
        """The signal came before our handler was installed (Python's own start, ``site``, the
        first imports): Python's default then ended it, killed by the signal; for SIGINT, maybe
        after KeyboardInterrupt's traceback (status 1 while Python itself starts)."""
        python = self.err.rstrip().endswith("KeyboardInterrupt")  # its traceback (chained, in an import)
        if self.code == -self.signum:
            return not self.err or (python and self.signum == signal.SIGINT)
        return self.code == 1 and python and self.signum == signal.SIGINT

    def ok(self) -> bool:
        """Ended in time, as the shell expects (128 + N, or as Python ends before our handler),
        with nothing left and no traceback."""
        ended = self.early() or (self.code == 128 + self.signum and "Traceback" not in self.err)
        return ended and self.took <= DEADLINE and not self.left

    def __str__(self) -> str:
        name = signal.Signals(self.signum).name
        return (
            f"{name} after {self.delay:.3f} s ({self.phase}): status {self.code}, ended in {self.took:.3f} s, "
            f"left {list(self.left)}; stderr: {self.err[-1500:]!r}"
        )


def _stat(pid: int) -> tuple[int, str, str] | None:
    """(ppid, state, start time) of ``pid``, None once it is gone."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return int(fields[1]), fields[0], fields[19]


def descendants(root: int) -> dict[int, str]:
    """Every process under ``root``: pid → its start time (so that a reused pid is not it)."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit() and (found := _stat(int(entry.name))) is not None:
            parents.setdefault(found[0], []).append(int(entry.name))
            starts[int(entry.name)] = found[2]
    out: dict[int, str] = {}
    todo = list(parents.get(root, []))
    while todo:
        pid = todo.pop()
        out[pid] = starts[pid]
        todo += parents.get(pid, [])
    return out


def _alive(family: dict[int, str], mentioning: str | None) -> list[str]:
    left = []
    for pid, start in family.items():
        found = _stat(pid)
        if found is not None and found[1] != "Z" and found[2] == start:
            left.append(str(pid))
    if mentioning:  # also what it started after we looked (a command line naming its folder)
        for entry in pathlib.Path("/proc").iterdir():
            try:
                line = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
            except OSError:
                continue
            found = _stat(int(entry.name)) if mentioning.encode() in line else None
            if found is not None and found[1] != "Z" and entry.name not in left:
                left.append(entry.name)
    return left


def interrupt(
    argv: Sequence[str],
    delay: float,
    signum: int,
    folder: pathlib.Path,
    *,
    phase: Callable[[str], str],
    mentioning: str | None = None,
) -> Outcome:
    """Start ``argv`` (its output into files in ``folder``), send ``signum`` after ``delay`` s, wait.

    ``phase(output)`` names the moment from what it printed by then; ``mentioning``: a string
    on the command line of every process it starts (its work folder), looked for afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    out_path, err_path = folder / "out", folder / "err"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with out_path.open("w") as out, err_path.open("w") as err:
        proc = subprocess.Popen(list(argv), stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        try:
            time.sleep(delay)  # the random moment is the point of the test
            family = descendants(proc.pid)
            seen = phase(out_path.read_text() + err_path.read_text())
            sent = time.monotonic()
            proc.send_signal(signum)
            try:
                code: int | None = proc.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                code = None
            took = time.monotonic() - sent
            while _alive(family, mentioning) and time.monotonic() < sent + DEADLINE:
                time.sleep(0.01)
            left = tuple(_alive(family, mentioning))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return Outcome(delay, signum, code, took, seen, left, err_path.read_text())


def first_output(argv: Sequence[str], folder: pathlib.Path, timeout: float = 60.0) -> float:
    """Seconds from the start of ``argv`` to its first output (on this machine, now): the span
    the random moments are drawn over. It is then interrupted, as a try would."""
    folder.mkdir(parents=True, exist_ok=True)
    out_path = folder / "out"
    with out_path.open("w") as out:
        started = time.monotonic()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=out, stdin=subprocess.DEVNULL)
        try:
            while not out_path.stat().st_size and proc.poll() is None and time.monotonic() < started + timeout:
                time.sleep(0.01)
            took = time.monotonic() - started
            assert out_path.stat().st_size, f"{argv} printed nothing in {timeout:.0f} s"
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(10)
    return took


def summary(command: str, outcomes: Sequence[Outcome]) -> str:
    took = sorted(o.took for o in outcomes)
    phases: dict[str, int] = {}
    for o in outcomes:
        phases[o.phase] = phases.get(o.phase, 0) + 1
    p50, p99 = took[len(took) // 2], took[min(len(took) - 1, int(len(took) * 0.99))]
    failed = sum(not o.ok() for o in outcomes)
    early = sum(o.early() for o in outcomes)
    return (
        f"{command}: {len(outcomes)} interrupts, {failed} failed, {early} before the handler; by phase {phases}; "
        f"signal to exit p50 {p50:.3f} s, p99 {p99:.3f} s, max {took[-1]:.3f} s"
    )
