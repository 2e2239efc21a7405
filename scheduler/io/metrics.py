"""Prometheus metrics with Volcano's names, exposed with ``prometheus_client``; ``/metrics`` + ``/healthz``.

Names follow Volcano's ``pkg/scheduler/metrics`` (namespace ``volcano``) so existing
dashboards keep working: ``volcano_e2e_scheduling_latency_milliseconds`` (histogram,
exponential buckets 5 ms × 2⁰ … 2⁹), ``volcano_schedule_attempts_total{result}``,
``volcano_queue_allocated_milli_cpu{queue_name}``, ``volcano_queue_pod_group_*_count`` and
friends. Our own additions are prefixed ``vbridge_scheduler_``, among them the status writer's
(``status_writes``, ``status_queue_depth``, ``status_coalesced``, ``status_dropped``) and
``parked_gangs``. The watches' counts, kept
process-wide by the kernel as plain numbers (``bridge.k8s.watching.STATS``), are exported by
:func:`watch_families` (``vbridge_watch_relists_total{resource,reason}``, ``..._resumes_total``,
``..._skipped_total{resource}``), which any process's collector can yield as this one does.

Each ``Metrics`` has its own ``CollectorRegistry`` (never the process-wide one, so two
schedulers in one process, as in tests, do not share counts). ``Metrics.cycle`` keeps the
numbers; one collector turns them into metric families when scraped, so the queue gauges are
exactly the last cycle's queues and counters carry no ``_created`` series (Volcano's have none).
Values are written as floats (``3.0``); ``volcano_total_preemption_attempts`` is untyped, as
prometheus_client would otherwise rename a counter without the ``_total`` suffix.

The server is plain asyncio (one request per connection), bound to loopback by default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from prometheus_client import exposition, registry
from prometheus_client import metrics_core as families

from bridge import probes
from bridge.k8s import watching
from scheduler import build
from scheduler.api import plan

__all__ = [
    "BUCKETS",
    "CONTENT_TYPE",
    "CYCLE_BUCKETS",
    "E2E",
    "PHASES",
    "Metrics",
    "StatusCounts",
    "serve",
    "watch_families",
]


class StatusCounts(Protocol):
    """What the status writer counts (``status.Counts``)."""

    requests: int
    queued: int
    coalesced: int
    dropped: int


BUCKETS = tuple(5.0 * 2**i for i in range(10))
CYCLE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
CONTENT_TYPE = exposition.CONTENT_TYPE_PLAIN_0_0_4
E2E = "volcano_e2e_scheduling_latency_milliseconds"
PHASES = ("inqueue", "pending", "running", "unknown", "completed")


class Metrics:
    """What the scheduler reports, updated once per cycle; ``render()`` is the exposition text."""

    def __init__(self, watches: watching.Stats = watching.STATS) -> None:
        self.watches = watches  # the process's watches (a test may hand its own)
        self.e2e_buckets = [0] * len(BUCKETS)  # observations ≤ each bound (cumulative, as exposed)
        self.e2e_count = 0
        self.e2e_sum = 0.0
        self.attempts: dict[str, int] = {"scheduled": 0, "unschedulable": 0, "error": 0}
        self.preemption_attempts = 0
        self.preemption_victims = 0
        self.unschedule_jobs = 0
        self.queues: dict[str, plan.QueueVerdict] = {}
        self.cycles = 0
        # Whole cycles in seconds, in buckets that hold the 1 s a cycle should stay within.
        self.cycle_buckets = [0] * len(CYCLE_BUCKETS)
        self.cycle_count = 0
        self.cycle_sum = 0.0
        self.binds_failed = 0
        self.writes = 0
        self.leader = 0
        self.parked = 0  # gangs parked after the last cycle (scheduler.io.parking)
        self.status: StatusCounts | None = None  # the status writer's counts, read when scraped
        self.status_depth: Callable[[], int] = lambda: 0  # its queue's length now
        self.port = 0  # the bound metrics port, once serving
        self.registry = registry.CollectorRegistry()
        self.registry.register(_Collector(self))

    def observe_e2e(self, milliseconds: float) -> None:
        self.e2e_count += 1
        self.e2e_sum += milliseconds
        for i, bound in enumerate(BUCKETS):
            if milliseconds <= bound:
                self.e2e_buckets[i] += 1

    def cycle(self, verdicts: plan.Plan, *, seconds: float, bound: int, failed: int, writes: int) -> None:
        self.cycles += 1
        self.cycle_count += 1
        self.cycle_sum += seconds
        for i, most in enumerate(CYCLE_BUCKETS):
            if seconds <= most:
                self.cycle_buckets[i] += 1
        self.observe_e2e(seconds * 1000.0)
        self.attempts["scheduled"] += bound
        self.attempts["error"] += failed
        self.attempts["unschedulable"] += sum(1 for v in verdicts.pods if v.reason != "Scheduled")
        evictions = verdicts.evictions()
        if evictions:
            self.preemption_attempts += 1
        self.preemption_victims = len(evictions)
        self.unschedule_jobs = sum(
            1 for g in verdicts.podgroups if any(c.type == "Unschedulable" for c in g.conditions)
        )
        self.queues = {q.name: q for q in verdicts.queues}
        self.binds_failed += failed
        self.writes += writes

    def render(self) -> str:
        """The Prometheus text exposition (format 0.0.4) of this instance's registry."""
        return exposition.generate_latest(self.registry).decode()


class _Collector(registry.Collector):
    """Metric families from a ``Metrics``' numbers, built at each scrape."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[families.Metric]:
        m = self.metrics
        buckets = [(f"{bound:g}", float(n)) for bound, n in zip(BUCKETS, m.e2e_buckets, strict=True)]
        yield families.HistogramMetricFamily(
            E2E,
            "E2e scheduling latency in milliseconds (scheduling algorithm + binding)",
            buckets=[*buckets, ("+Inf", float(m.e2e_count))],
            sum_value=m.e2e_sum,
        )
        attempts = families.CounterMetricFamily(
            "volcano_schedule_attempts", "Number of attempts to schedule pods, by the result", labels=["result"]
        )
        for result, count in m.attempts.items():
            attempts.add_metric([result], count)
        yield attempts
        # A counter whose name lacks ``_total``: prometheus_client would append one, so it is
        # exposed untyped under Volcano's exact name (PromQL's rate() takes it all the same).
        yield families.UnknownMetricFamily(
            "volcano_total_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            value=m.preemption_attempts,
        )
        yield families.GaugeMetricFamily(
            "volcano_pod_preemption_victims", "Number of selected preemption victims", value=m.preemption_victims
        )
        yield families.GaugeMetricFamily(
            "volcano_unschedule_job_count", "Number of jobs could not be scheduled", value=m.unschedule_jobs
        )
        yield from self._queues()
        yield families.CounterMetricFamily("vbridge_scheduler_cycles", "Scheduling cycles run", value=m.cycles)
        cycle = [(f"{bound:g}", float(n)) for bound, n in zip(CYCLE_BUCKETS, m.cycle_buckets, strict=True)]
        yield families.HistogramMetricFamily(
            "vbridge_scheduler_cycle_duration_seconds",
            "Whole scheduling cycles (snapshot, actions, binds) in seconds",
            buckets=[*cycle, ("+Inf", float(m.cycle_count))],
            sum_value=m.cycle_sum,
        )
        status = m.status
        yield families.CounterMetricFamily(
            "vbridge_scheduler_status_writes",
            "Status, condition and event requests made",
            value=status.requests if status is not None else m.writes,
        )
        if status is not None:
            yield families.GaugeMetricFamily(
                "vbridge_scheduler_status_queue_depth", "Status writes queued, not yet sent", value=m.status_depth()
            )
            yield families.CounterMetricFamily(
                "vbridge_scheduler_status_coalesced",
                "Status writes that replaced one still queued for the same object",
                value=status.coalesced,
            )
            yield families.CounterMetricFamily(
                "vbridge_scheduler_status_dropped",
                "Status writes refused (404, 409), failed, or out of date when their turn came",
                value=status.dropped,
            )
        yield families.GaugeMetricFamily(
            "vbridge_scheduler_parked_gangs",
            "Gangs left out of cycles until something they could use changes",
            value=m.parked,
        )
        yield families.GaugeMetricFamily("vbridge_scheduler_leader", "1 while this instance may bind", value=m.leader)
        info = families.GaugeMetricFamily(
            "vbridge_scheduler_build_info", "1, labelled with the core's build (scheduler.build)", labels=["core"]
        )
        info.add_metric([build.core()], 1)
        yield info
        yield from watch_families(m.watches)

    def _queues(self) -> Iterator[families.Metric]:
        from scheduler.api import resources  # numpy: loaded with the core, after start-up's lists

        queues = sorted(self.metrics.queues.items())
        cpu = families.GaugeMetricFamily(
            "volcano_queue_allocated_milli_cpu", "Allocated CPU count for one queue", labels=["queue_name"]
        )
        memory = families.GaugeMetricFamily(
            "volcano_queue_allocated_memory_bytes", "Allocated memory for one queue", labels=["queue_name"]
        )
        for name, q in queues:
            allocated = resources.parse(dict(q.allocated))
            cpu.add_metric([name], allocated.cpu)  # the core keeps CPU in millicores
            memory.add_metric([name], allocated.memory)
        yield cpu
        yield memory
        for phase in PHASES:
            counts = families.GaugeMetricFamily(
                f"volcano_queue_pod_group_{phase}_count",
                f"The number of {phase.capitalize()} PodGroup in this queue",
                labels=["queue_name"],
            )
            for name, q in queues:
                counts.add_metric([name], getattr(q, phase))
            yield counts


def watch_families(stats: watching.Stats) -> Iterator[families.Metric]:
    """The watches' counters: lists by watched path and reason (``first``, ``gone`` for 410,
    ``error``), resumed watches (``end``, ``dropped``), objects skipped as undecodable."""
    relists = families.CounterMetricFamily(
        "vbridge_watch_relists",
        "Lists made by watches, by watch (path and selectors) and reason",
        labels=["resource", "reason"],
    )
    resumes = families.CounterMetricFamily(
        "vbridge_watch_resumes",
        "Watches resumed without a list, by watch (path and selectors) and reason",
        labels=["resource", "reason"],
    )
    skipped = families.CounterMetricFamily(
        "vbridge_watch_skipped",
        "Objects skipped by watches as undecodable, by watch (path and selectors)",
        labels=["resource"],
    )
    for (path, reason), count in sorted(stats.lists.items()):
        relists.add_metric([path, reason], count)
    for (path, reason), count in sorted(stats.resumes.items()):
        resumes.add_metric([path, reason], count)
    for path, count in sorted(stats.skipped.items()):
        skipped.add_metric([path], count)
    yield from (relists, resumes, skipped)


async def serve(
    metrics: Metrics, *, port: int, host: str = "127.0.0.1", healthy: Callable[[], bool] = lambda: True
) -> None:
    """Serve until cancelled; ``port`` 0 picks a free one (see ``metrics.port`` once bound)."""

    def bound(actual: int) -> None:
        metrics.port = actual

    routes: dict[str, probes.Handler] = {
        "/metrics": lambda: (200, CONTENT_TYPE, metrics.render().encode()),
        "/healthz": lambda: probes.check(healthy(), bad=b"unhealthy"),
    }
    await probes.serve(routes, host=host, port=port, on_bound=bound)
