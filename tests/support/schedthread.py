"""Our scheduler on a background loop, and the record of every cycle it ran, for synchronous tests.

``Cycles.record`` is the scheduler's ``on_cycle`` callback: it runs on the scheduler's loop
thread while the test thread reads and waits, hence the condition variable.

A test that must show that something does *not* happen (a gang that must stay unbound, a
share that must stay as it is) waits on cycles, not on the clock: once the scheduler's cache
holds the objects in question, ``Cycles.next(n)`` returns after ``n`` whole cycles that began
after the call, so each of them decided with those objects in view.
"""

from __future__ import annotations

import asyncio
import pathlib
import threading
from collections.abc import Callable, Collection

from bridge.k8s import client, kubeconfigs
from scheduler.framework import config
from scheduler.io import binder, loop
from tests.support import loopthread
from vbridge.localcluster import cluster


class Cycles:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._reports: list[loop.CycleReport] = []

    def record(self, report: loop.CycleReport) -> None:
        with self._changed:
            self._reports.append(report)
            self._changed.notify_all()

    def reports(self) -> list[loop.CycleReport]:
        with self._changed:
            return list(self._reports)

    def ended(self, timeout: float = 30.0) -> loop.CycleReport:
        """The report of the next cycle to end after this call (waiting for it)."""
        with self._changed:
            start = len(self._reports)
            if not self._changed.wait_for(lambda: len(self._reports) > start, timeout):
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for a scheduler cycle")
            return self._reports[start]

    def next(self, count: int, timeout: float = 30.0) -> list[loop.CycleReport]:
        """The reports of ``count`` cycles that all began after this call (waiting for them).

        Cycles run one after another: the first to end after the call may have begun before
        it, so ``count + 1`` must end and the first of them is left out.
        """
        with self._changed:
            start = len(self._reports)
            if not self._changed.wait_for(lambda: len(self._reports) > start + count, timeout):
                seen = len(self._reports) - start
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {count + 1} cycles ({seen} ran)")
            return self._reports[start + 1 : start + 1 + count]


class SchedThread(loopthread.LoopThread):
    """``loop.Scheduler(conf)`` against ``lc`` (through ``kubeconfig`` when given: e.g. a proxy);
    ``cycles`` records every cycle, then ``on_cycle`` sees it."""

    def __init__(
        self,
        lc: cluster.LocalCluster,
        conf: config.SchedulerConfig,
        *,
        hook: binder.Hook | None = None,
        on_cycle: Callable[[loop.CycleReport], None] | None = None,
        connections: int = 32,
        metrics_port: int | None = None,
        name: str = "scheduler",
        kubeconfig: pathlib.Path | None = None,
    ) -> None:
        self.cycles = Cycles()
        self.scheduler_name = conf.scheduler_name
        self.scheduler: loop.Scheduler | None = None

        def record(report: loop.CycleReport) -> None:
            self.cycles.record(report)
            if on_cycle is not None:
                on_cycle(report)

        async def main(ready: asyncio.Event) -> None:
            async with client.Client(kubeconfigs.load(kubeconfig or lc.kubeconfig), connections=connections) as api:
                sched = loop.Scheduler(
                    api, conf, period=0.5, bind_hook=hook, on_cycle=record, metrics_port=metrics_port
                )
                self.scheduler = sched
                task = asyncio.create_task(sched.run())
                try:
                    await sched.cache.synced.wait()
                    ready.set()
                    await task
                finally:
                    # Let the scheduler unwind (close its streams) before the client closes.
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)

        super().__init__(main, name)

    @property
    def reports(self) -> list[loop.CycleReport]:
        return self.cycles.reports()

    def sees(self, pods: Collection[str]) -> bool:
        """Whether the scheduler's cache holds every pod ("namespace/name") in ``pods``."""
        sched = self.scheduler
        return sched is not None and all(sched.cache.pod(key) for key in pods)
