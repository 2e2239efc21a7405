"""Per-pod bind times for the scale benches: when each pod of one namespace is first seen bound.

``BindClock.follow`` watches the namespace; ``created`` is filled by whoever POSTs the pods (the
time the create answered), ``bound`` by the watch (the time the pod was first seen with
``spec.nodeName``); both on ``time.perf_counter``. ``wait`` returns once every named pod is
bound, or the deadline or a dead process ends it. ``peak_rss`` reads a process's VmHWM.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
import time
from collections.abc import Callable, Iterable

from bridge.k8s import client, paths, watching


class BindClock:
    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.created: dict[str, float] = {}
        self.bound: dict[str, float] = {}
        self.synced = asyncio.Event()
        self._changed = asyncio.Event()

    async def follow(self, api: client.Client) -> None:
        async for kind, pod in watching.watch(api, paths.resource("v1", "pods", namespace=self.namespace)):
            if kind == "SYNCED":
                self.synced.set()
                continue
            name = pod["metadata"]["name"]
            if (pod.get("spec") or {}).get("nodeName") and name not in self.bound:
                self.bound[name] = time.perf_counter()
                self._changed.set()

    async def wait(self, names: Iterable[str], deadline: float, alive: Callable[[], bool]) -> str:
        """'' once every pod of ``names`` is bound; else why not (timeout, the process exited)."""
        wanted = set(names)
        while not wanted <= self.bound.keys():
            if not alive():
                return "the scheduler exited"
            if time.perf_counter() > deadline:
                return f"timeout: {len(wanted & self.bound.keys())}/{len(wanted)} bound"
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), 0.2)
        return ""

    def latencies(self) -> list[float]:
        """Creation → bind of every pod created and bound, in seconds."""
        return [self.bound[n] - t for n, t in self.created.items() if n in self.bound]


def peak_rss(pid: int | None) -> float:
    """The process's peak resident set (VmHWM) in MB; 0 when it cannot be read."""
    return _status_kb(pid, "VmHWM") / 1024


def rss(pid: int | None) -> float:
    """The process's resident set now (VmRSS) in MB; 0 when it cannot be read."""
    return _status_kb(pid, "VmRSS") / 1024


def _status_kb(pid: int | None, field: str) -> float:
    if pid is None:
        return 0.0
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return float(line.split()[1])
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds the process has used so far; 0 when it cannot be read."""
    if pid is None:
        return 0.0
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
