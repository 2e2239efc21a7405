"""The scheduler: cache → snapshot → ``cycle.schedule`` → binder → status, on a timer and on events.

``await Scheduler(api, conf).run()`` runs until cancelled. A cycle starts every ``period``
seconds, and ``debounce`` seconds after a relevant watch event (events arriving meanwhile are
folded into one cycle). No cycle runs before every watch has listed once (Volcano #5174: a
first session before cache sync makes wrong decisions), nor while another instance leads.

On the native backend (``conf.backend``) the plan has no binds: its operations are queue-gate
lifts (``plan.Ungate``), carried out by the binder like the rest; kube-scheduler places.

What is on a cycle's path, and only that: the snapshot, the core, the binds (all of a gang's
binds are, however many). Status writes are not: the cycle hands its verdicts to the
``status.StatusWriter``'s queue (no I/O) and the writer's own task writes them out, paced, so
the next cycle's binds never wait for the last one's bookkeeping. Gangs the last verdicts said
cannot be scheduled are parked (``parking``) and handed to the core as
``SchedulerConfig.parked`` until something they could use changes (``Cache.generation``, one of
their own pods arrives) or their backoff ends; not on the native backend.

The core's work (building the snapshot, the actions) runs in a worker thread so watches,
lease renewals and the metrics server stay responsive during a long cycle; its inputs are
shallow copies of immutable-by-convention objects, so the thread sees a consistent view.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import gc
import importlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from bridge import defaults, errors, keys
from bridge.k8s import client, lease, paths
from scheduler.api import plan
from scheduler.framework import config
from scheduler.io import binder, metrics, parking, status
from scheduler.io import cache as sched_cache

__all__ = ["CORE_MODULES", "CycleReport", "Scheduler", "collector_paused"]

log = logging.getLogger(__name__)

# The pure core (numpy and all) is imported in a worker thread while the cache lists, not when
# this module loads: at start-up the two overlap instead of adding up.
CORE_MODULES = ("scheduler.api.building", "scheduler.cycle")


@dataclasses.dataclass(frozen=True, slots=True)
class CycleReport:
    seconds: float  # whole cycle: snapshot, actions, binds, handing verdicts to the status writer
    core_seconds: float  # snapshot + actions only
    bind_seconds: float  # from the cycle's start until its last bind returned
    outcome: binder.Outcome
    writes: int  # status writes the cycle queued (written later, by the writer's task)
    # This cycle's ordinal (1, 2, ...); 0 when the Lease was lost while deciding: no status was
    # written, and only binds already handed over went out.
    cycle: int = 0
    # The PodGroup ("namespace/name") of each pod the cycle tried to bind (bound or failed), from
    # its annotation as the cycle saw it; pods without one are left out. With ``cycle``, what
    # proves a gang went out in one cycle.
    groups: Mapping[str, str] = dataclasses.field(default_factory=dict)
    parked: int = 0  # gangs the cycle left out (parked before it)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block; as it was after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load_core() -> None:
    for name in CORE_MODULES:
        importlib.import_module(name)


class Scheduler:
    def __init__(
        self,
        api: client.Client,
        conf: config.SchedulerConfig,
        *,
        period: float = 1.0,
        debounce: float = 0.02,
        elector: lease.Elector | None = None,
        metrics_port: int | None = None,
        metrics_host: str = "127.0.0.1",
        bind_hook: binder.Hook | None = None,
        on_cycle: Callable[[CycleReport], None] | None = None,
        clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
        write_api: client.Client | None = None,
        status_qps: float = defaults.STATUS_QPS,
        status_burst: int = defaults.STATUS_BURST,
    ) -> None:
        self.api = api
        self.conf = conf
        self.period = period
        self.debounce = debounce
        self.elector = elector
        self.metrics_port = metrics_port
        self.metrics_host = metrics_host
        self.on_cycle = on_cycle
        self.clock = clock
        self.metrics = metrics.Metrics()
        self._wake = asyncio.Event()
        self.native = conf.backend == defaults.NATIVE
        lifted = frozenset({keys.QUEUE_GATE}) if self.native else frozenset()
        self.cache = sched_cache.Cache(api, on_change=self._wake.set, lifted=lifted)
        # Writes may go through their own client: the watches each pin a connection of theirs.
        writer = write_api or api
        self._writer = write_api
        self.status = status.StatusWriter(writer, self.cache, qps=status_qps, burst=status_burst)
        self.binder = binder.Binder(writer, self.cache, self.status, hook=bind_hook)
        self.metrics.status = self.status.counts
        self.metrics.status_depth = lambda: len(self.status.queue)
        self.parking = parking.Parking()
        self.cycles = 0
        self._queues_ensured = False
        # What each cycle's snapshot derived from each pod, for the next (``podfacts.Memo``; made
        # in the core's thread, with the core's modules).
        self._memo: Any = None

    def is_leader(self) -> bool:
        return self.elector is None or self.elector.is_leader()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(self.cache.run())
            group.create_task(self.status.run())
            core = group.create_task(asyncio.to_thread(_load_core))
            if self._writer is not None:
                # Open the write pool while the cache lists: the first cycle's binds then start at
                # full concurrency instead of waiting on dozens of TLS handshakes at once.
                group.create_task(self._writer.warm())
            if self.elector is not None:
                group.create_task(self.elector.run())
                group.create_task(self._follow_leadership(self.elector))
            if self.metrics_port is not None:
                group.create_task(
                    metrics.serve(self.metrics, port=self.metrics_port, host=self.metrics_host, healthy=self._healthy)
                )
            group.create_task(self._loop(core))

    def _healthy(self) -> bool:
        return self.cache.synced.is_set()

    async def _follow_leadership(self, elector: lease.Elector) -> None:
        while True:
            await elector.changed.wait()
            elector.changed.clear()
            self.metrics.leader = int(elector.is_leader())
            if not elector.is_leader():
                self.status.clear()  # verdicts of a term that ended: not ours to write any more
            self._wake.set()

    async def _loop(self, core: asyncio.Task[None]) -> None:
        # No cyclic collection while the lists arrive (this task's first step runs before any
        # answer does): each full collection would rescan all listed so far, ~0.2 s at 5,000
        # pods. Then everything listed is long-lived: frozen out of the collector's scans (its
        # JSON dicts form no cycles, so refcounting still frees them when replaced).
        with collector_paused():
            await self.cache.synced.wait()
            await core
            gc.freeze()
        log.info("cache synced: %s", ", ".join(f"{len(v)} {k}" for k, v in self.cache.store.items()))
        while True:
            self._wake.clear()
            if self.is_leader():
                # No cyclic collection during a cycle (snapshot, actions, binds, status writes):
                # the core builds a heap of short-lived objects and each bind some garbage; one
                # cycle's worth is collected after it. A full collection landing inside a cycle
                # cost ~0.6 s at 100k pods (bench/scheduler_core), and young ones ~0.2 s of CPU
                # over 5,000 binds, taken from the apiserver on a small machine.
                with collector_paused():
                    try:
                        await self.run_once()
                    except errors.BridgeError as exc:
                        # The API said no (or the conf cannot be used on this input): log, try again.
                        log.error("scheduling cycle failed: %s", exc)
                    except Exception:
                        # Anything else (a dropped connection mid-write, a bug on one odd object)
                        # ends this cycle, never the scheduler: the next one starts from the cache.
                        log.exception("scheduling cycle failed unexpectedly")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.period)
            await asyncio.sleep(self.debounce)  # fold a burst of events into one cycle

    async def run_once(self) -> CycleReport:
        """One cycle; the caller makes sure the cache is synced and we lead.

        Each committed statement's binds go out while the core is still deciding the rest (the
        core runs in a worker thread and hands them over through ``on_commit``), as Volcano binds
        from inside its session; evictions and nominations wait for the whole plan. The verdicts
        are queued for the status writer, not written: the cycle ends with its last bind."""
        t0 = time.perf_counter()
        if not self._queues_ensured:
            await self._ensure_queues()
        inputs = self.cache.inputs()
        generation, grown = self.cache.generation, self.cache.take_grown()
        now, started = self.clock(), time.monotonic()
        parked = frozenset() if self.native else self.parking.current(started, generation, grown)
        conf = dataclasses.replace(self.conf, parked=parked) if parked else self.conf
        aio = asyncio.get_running_loop()
        binding: list[asyncio.Task[binder.Outcome]] = []
        groups: dict[str, str] = {}
        handed: list[plan.Allocate] = []  # committed in the thread, not yet sent; under ``lock``
        lock = threading.Lock()

        def start() -> None:  # on the event loop: send all that was handed over meanwhile
            with lock:
                ops = handed[:]
                handed.clear()
            if ops and self.is_leader():
                groups.update(self._groups(op.pod for op in ops))
                binding.append(aio.create_task(self.binder.execute(ops)))

        def on_commit(ops: list[plan.Allocate]) -> None:  # in the core's thread
            with lock:
                wake = not handed  # one wake-up per batch, not per statement
                handed.extend(ops)
            if wake:
                aio.call_soon_threadsafe(start)

        try:
            verdicts = await asyncio.to_thread(self._decide, inputs, now, on_commit, conf)
        except BaseException:
            await asyncio.gather(*binding, return_exceptions=True)
            raise
        # The thread queued every ``start`` before it returned, so all have run by now.
        core = time.perf_counter() - t0
        if not self.is_leader():  # lost the Lease while thinking: act on nothing more
            outcome = binder.merge(await asyncio.gather(*binding))
            return CycleReport(time.perf_counter() - t0, core, core, outcome, 0)
        rest = [op for op in verdicts.operations if not isinstance(op, plan.Allocate)]
        outcome = binder.merge(await asyncio.gather(*binding, self.binder.execute(rest)))
        binds = time.perf_counter() - t0
        if not self.native:
            self._park(verdicts, started, generation)
        writes = self.status.submit(verdicts, bound=outcome.bound)
        self.cycles += 1
        report = CycleReport(
            time.perf_counter() - t0, core, binds, outcome, writes, self.cycles, groups, parked=len(parked)
        )
        self.metrics.parked = len(self.parking)
        self.metrics.cycle(
            verdicts, seconds=report.seconds, bound=len(outcome.bound), failed=len(outcome.failed), writes=writes
        )
        if outcome.bound or outcome.failed:
            log.info(
                "cycle %d: %d bound, %d failed in %.0f ms (core %.0f ms, binds done at %.0f ms), %d writes queued",
                self.cycles,
                len(outcome.bound),
                len(outcome.failed),
                report.seconds * 1000,
                core * 1000,
                binds * 1000,
                writes,
            )
        if self.on_cycle is not None:
            self.on_cycle(report)
        return report

    def _park(self, verdicts: plan.Plan, now: float, generation: int) -> None:
        """Park the gangs the plan says are stuck (``Plan.stuck``: not schedulable now, holding
        nothing); forget the others it gave a verdict (placed, or changed), and the gone."""
        stuck: dict[str, str] = {}
        for group in verdicts.podgroups:
            if group.key in verdicts.stuck:
                stuck[group.key] = next(c.reason for c in group.conditions if c.type == "Unschedulable")
        self.parking.forget(g.key for g in verdicts.podgroups if g.key not in verdicts.stuck)
        self.parking.park(stuck, now, generation)
        self.parking.keep_only(self.cache.store["podgroups"])

    def _groups(self, pods: Iterable[str]) -> dict[str, str]:
        """Each pod's PodGroup key, read before its bind goes out (the pod may be gone after)."""
        out: dict[str, str] = {}
        for key in pods:
            pod = self.cache.pod(key) or {}
            group = ((pod.get("metadata") or {}).get("annotations") or {}).get(keys.GROUP_NAME)
            if group:
                out[key] = f"{key.partition('/')[0]}/{group}"
        return out

    def _decide(
        self,
        inputs: dict[str, list[sched_cache.Obj]],
        now: datetime.datetime,
        on_commit: Callable[[list[plan.Allocate]], None],
        conf: config.SchedulerConfig,
    ) -> plan.Plan:
        from scheduler import cycle
        from scheduler.api import building, podfacts  # loaded already by ``_load_core``

        if self._memo is None:
            self._memo = podfacts.Memo()
        snap = building.build(
            nodes=inputs["nodes"],
            pods=inputs["pods"],
            podgroups=inputs["podgroups"],
            queues=inputs["queues"],
            priorityclasses=inputs["priorityclasses"],
            scheduler_name=self.conf.scheduler_name,
            native=self.native,
            memo=self._memo,
        )
        return cycle.schedule(snap, conf, now, on_commit)

    async def _ensure_queues(self) -> None:
        path = paths.resource(defaults.QUEUE_API, "queues")
        for body in defaults.default_queue_objects():
            name = body["metadata"]["name"]
            if name in self.cache.store["queues"]:
                continue
            try:
                await self.api.request("POST", path, body=body)
                log.info("created queue %s", name)
            except errors.ApiError as exc:
                if exc.status != 409:
                    raise
        self._queues_ensured = True
