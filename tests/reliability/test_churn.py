"""R25, the churn run: Volcano Jobs and plain PodGroups arrive across three queues and finish
while faults are injected at random on every component's link to the apiserver; at the end
nothing is lost, counted from the apiserver.

The bridge and the scheduler reach the apiserver through Toxiproxy; the node simulator and the
test's own client do not. Every ``CHURN_SECONDS`` / ``CHURN_RATE`` (budget.py: 60 s at 1/s in CI,
600 s at 2/s, 1,200 PodGroups, with ``VBRIDGE_RELIABILITY_LONG=1``) a PodGroup is submitted: a
Volcano Job of 3 (through the Fail webhook: its create time is the admission figure) or a
PodGroup of 2 with its pods. Finished work is cleaned away as users' operators do (Volcano Jobs
carry ``ttlSecondsAfterFinished``; a plain gang is deleted once both pods succeeded), and what
finished is kept in a ``ledger.Ledger`` fed by a probe every ``PROBE`` seconds. Faults, one at a
time at random moments (seeded, the seed printed):
reset_peer (2 s), latency 300 ms (5 s), the proxy cut (2 s). The verdict: every submitted job
reached one terminal state and every plain gang finished (lost = 0), no gang went out below
minMember (its first minMember binds in one cycle), no double bind, no orphan. Printed: the
totals, admission p99, scheduling p99 (pod created -> bound, and job created -> gang bound), and
the test process's RSS over time (it holds the bridge, scheduler and simulator threads), which
must be flat: the median of the last quarter of the run at most ``RSS_SLOPE`` MiB/s above the
median of the second quarter (plus ``RSS_SLACK``). With ``VBRIDGE_CHURN_TRACE_HEAP=1`` the run's
Python allocations are traced and the growth of its last half is said by owner (the product, the
test's own records, libraries): what RSS alone cannot tell apart.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import resource
import time
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from scheduler.io import loop
from tests.builders import vcjob
from tests.reliability import conftest
from tests.support import accounting, apiserver, budget, gangcheck, heapgrowth, ledger, proxiedbed, schedbed, toxiproxy
from vbridge.localcluster import cluster

pytestmark = [pytest.mark.reliability, pytest.mark.integration]
NAME = "rel-churn"
QUEUES = ("churn-a", "churn-b", "churn-c")
TTL = 15  # a finished Volcano Job's ttlSecondsAfterFinished
PROBE = 2.0  # seconds between the ledger's probes
RSS_SLOPE, RSS_SLACK = 0.1, 48.0  # MiB/s and MiB: what "flat" allows


class Clock:
    """When each pod was first bound (monotonic seconds), from the scheduler's cycle reports."""

    def __init__(self, log: gangcheck.BindLog) -> None:
        self.log = log
        self.bound: dict[str, float] = {}

    def record(self, report: loop.CycleReport) -> None:
        now = time.monotonic()
        for pod in report.outcome.bound:
            self.bound.setdefault(pod, now)
        self.log.record(report)


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def sockets() -> int:
    """Open sockets of this process (the components' connections to the apiserver, the webhook's
    from it, the test's own): sampled with RSS, since each TLS connection holds ~256 KiB."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


def flat(rss: list[tuple[float, float]], span: float) -> tuple[bool, float]:
    """Whether RSS is flat over the last half of ``span`` seconds (module docstring); the growth
    between the second and the last quarter, MiB."""
    second = [m for s, m in rss if span / 4 <= s < span / 2]
    last = [m for s, m in rss if s >= span * 3 / 4]
    growth = median(last) - median(second)
    return bool(second and last) and growth <= RSS_SLOPE * span / 2 + RSS_SLACK, growth


def forget_captured_logs() -> None:
    """Empty what pytest's log capture keeps of the run so far (its handlers on the root logger:
    every record, with its exception's traceback, so its frames and the buffers their locals hold).
    Ten minutes of faults are thousands of warnings: kept, they would be the harness's memory
    growth, not the bridge's, whose records are written and dropped."""
    for handler in logging.getLogger().handlers:
        records = getattr(handler, "records", None)
        if isinstance(records, list) and callable(getattr(handler, "clear", None)):
            handler.clear()


def clean_up(api: k8s.ApiClient, ns: str, book: ledger.Ledger, plain: set[str]) -> None:
    """Feed the ledger a probe; delete the plain gangs it says finished (pods, then the group)."""
    for gang in book.observe(accounting.count(api, [ns], events=False), plain):
        name = gang.partition("/")[2]
        for i in range(2):
            with contextlib.suppress(k8s.ApiException):
                k8s.CoreV1Api(api).delete_namespaced_pod(f"{name}-{i}", ns, grace_period_seconds=0)
        with contextlib.suppress(k8s.ApiException):
            k8s.CustomObjectsApi(api).delete_namespaced_custom_object(*apiserver.PG, ns, "podgroups", name)


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


@contextlib.contextmanager
def fault(proxy: toxiproxy.Proxied, kind: str) -> Iterator[float]:
    """One fault for the block; its duration in seconds."""
    if kind == "cut":
        proxy.cut()
        try:
            yield 2.0
        finally:
            proxy.restore()
    elif kind == "latency":
        with proxy.toxic("latency", both=True, latency=300, jitter=100):
            yield 5.0
    else:
        with proxy.toxic("reset_peer", both=True, timeout=0):
            yield 2.0


@pytest.fixture(scope="module")
def bed(
    tracer: heapgrowth.Tracer | None, rlc: cluster.LocalCluster, rapi: k8s.ApiClient, proxy: toxiproxy.Proxied
) -> Iterator[tuple[Clock, gangcheck.BindLog]]:
    for weight, name in enumerate(QUEUES, start=1):
        schedbed.queue(rapi, name, weight)
    log = gangcheck.BindLog()
    clock = Clock(log)
    node = {"cpu": "8", "memory": "32Gi", "pods": 300}
    try:
        with proxiedbed.running(
            rlc, rapi, proxy, name=NAME, prefix="churn", on_cycle=clock.record, run_seconds=1.0, **node
        ):
            yield clock, log
    finally:
        for name in QUEUES:
            k8s.CustomObjectsApi(rapi).delete_cluster_custom_object(*apiserver.PG, "queues", name)


@pytest.fixture(scope="module")
def tracer() -> Iterator[heapgrowth.Tracer | None]:
    """Python allocations traced when ``budget.TRACE_HEAP``, from before the bed starts (``bed``
    asks for it first) to the end of the module."""
    if not budget.TRACE_HEAP:
        yield None
        return
    with heapgrowth.traced() as traced:
        yield traced


def submit_job(api: k8s.ApiClient, ns: str, name: str, queue: str) -> float:
    """Create the Volcano Job (retrying while the webhook's queue facts lag); its create's seconds."""
    body = vcjob.simple(name, 3, run_seconds=1.0, queue=queue, cpu="100m")
    body["spec"]["schedulerName"] = NAME
    body["spec"]["ttlSecondsAfterFinished"] = TTL

    def create() -> float | None:
        t0 = time.monotonic()
        try:
            k8s.CustomObjectsApi(api).create_namespaced_custom_object(*accounting.VC, ns, "jobs", body)
        except k8s.ApiException as exc:
            if exc.status != 403 or "does not exist" not in str(exc.body):
                raise
            return None  # the queue is new to the webhook: its watch brings it within moments
        return time.monotonic() - t0

    took: float = apiserver.eventually(create, 30, f"Volcano Job {name} admitted")
    return took


@pytest.mark.timeout(budget.CHURN_SECONDS * 3 + 300)
def test_r25_churn_with_random_faults_loses_nothing(
    bed: tuple[Clock, gangcheck.BindLog],
    proxy: toxiproxy.Proxied,
    rapi: k8s.ApiClient,
    rns: str,
    observe: conftest.Observe,
    tracer: heapgrowth.Tracer | None,
) -> None:
    clock, log = bed
    seed = random.SystemRandom().randrange(1 << 30)
    rng = random.Random(seed)
    print(f"churn seed {seed}")
    jobs: dict[str, float] = {}  # job -> monotonic time its create began
    gangs: dict[str, float] = {}  # plain PodGroup -> monotonic time its pods' create began
    admission: list[float] = []
    rss: list[tuple[float, float]] = []
    socks: list[int] = []  # open sockets at each RSS sample
    faults: list[str] = []
    t0 = time.monotonic()
    next_fault = t0 + rng.uniform(3, 10)
    index = 0
    stack = contextlib.ExitStack()
    fault_ends = 0.0
    book = ledger.Ledger()
    next_probe = t0 + PROBE
    half = t0 + budget.CHURN_SECONDS / 2
    while time.monotonic() - t0 < budget.CHURN_SECONDS:
        now = time.monotonic()
        if now >= next_probe:
            clean_up(rapi, rns, book, {f"{rns}/{g}" for g in gangs})
            forget_captured_logs()
            next_probe = time.monotonic() + PROBE
        if fault_ends and now >= fault_ends:
            stack.close()
            fault_ends = 0.0
            next_fault = now + rng.uniform(3, 10)
        elif not fault_ends and now >= next_fault:
            kind = rng.choice(["reset_peer", "latency", "cut"])
            fault_ends = now + stack.enter_context(fault(proxy, kind))
            faults.append(f"{kind}@{now - t0:.0f}s")
        queue = QUEUES[index % len(QUEUES)]
        if index % 2 == 0:
            name = f"j{index}"
            jobs[name] = time.monotonic()
            admission.append(submit_job(rapi, rns, name, queue))
        else:
            name = f"g{index}"
            gangs[name] = time.monotonic()
            schedbed.podgroup(rapi, rns, name, 2, queue=queue)
            schedbed.pods(rapi, rns, name, 2, scheduler=NAME, cpu="100m", run_seconds=1.0)
        index += 1
        if index % 10 == 0:
            rss.append((time.monotonic() - t0, rss_mib()))
            socks.append(sockets())
        if tracer and half and time.monotonic() >= half:
            tracer.mark()
            half = 0.0
        time.sleep(max(0.0, t0 + index / budget.CHURN_RATE - time.monotonic()))  # the arrival rate itself
    stack.close()
    arrived = time.monotonic() - t0

    names = [f"{rns}/{j}" for j in jobs]
    groups = [f"{rns}/{g}" for g in gangs]

    def settled() -> bool:
        clean_up(rapi, rns, book, set(groups))
        return not book.missing(names, groups)

    def short() -> str:
        last = accounting.count(rapi, [rns], events=False)
        missing = book.missing(names, groups)
        lost = accounting.short(last, [m for m in missing if m in names], [m for m in missing if m in groups])
        return f"every job terminal and every gang finished; not seen finished: {len(missing)}: {lost}"

    apiserver.eventually(settled, 240, short, every=2.0)
    tally = accounting.count(rapi, [rns])
    rss.append((time.monotonic() - t0, rss_mib()))
    socks.append(sockets())
    done = time.monotonic() - t0
    heap = f"; {tracer.report().text()}" if tracer else ""
    print(f"churn settled {done - arrived:.0f} s after the last of {len(jobs) + len(gangs)} arrivals")
    minimum = {g: m for g, (m, _, _) in tally.groups.items()}
    binds = {k: v for k, v in log.binds(unanswered=True).items() if k.startswith(rns + "/")}
    split = gangcheck.split_gangs(binds, minimum)
    assert not split, split[:20]
    assert not tally.partial() and not tally.double_binds, (tally.partial(), tally.double_binds)
    assert not tally.orphan_pods and not tally.orphan_groups, (tally.orphan_pods, tally.orphan_groups)
    terminal = {p for p in tally.jobs.values()}
    assert terminal <= accounting.TERMINAL, terminal
    submitted = len(jobs) + len(gangs)
    finished = book.finished(names, groups)
    assert finished == submitted, (submitted, finished, book.missing(names, groups)[:20])
    assert all(bound == 2 for bound in book.gangs.values()), book.gangs
    # A pod whose bind's answer was lost (counted by ``binds(unanswered=True)``) has no bind time.
    pod_latency = [
        clock.bound[f"{rns}/{g}-{i}"] - t for g, t in gangs.items() for i in range(2) if f"{rns}/{g}-{i}" in clock.bound
    ]
    job_latency = [
        max(clock.bound.get(f"{rns}/{j}-work-{i}", 0.0) for i in range(3)) - t
        for j, t in jobs.items()
        if all(f"{rns}/{j}-work-{i}" in clock.bound for i in range(3))
    ]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    is_flat, growth = flat(rss, arrived)
    assert is_flat, f"RSS grew {growth:.0f} MiB between the second and the last quarter: {rss}"
    samples = ", ".join(f"{s:.0f}s {m:.0f} ({n})" for (s, m), n in zip(rss, socks, strict=True))
    observe(
        f"{budget.CHURN_SECONDS:.0f} s at {budget.CHURN_RATE:g}/s across {len(QUEUES)} queues, {len(faults)} faults "
        f"({', '.join(faults)}), seed {seed}: submitted {submitted} ({len(jobs)} Volcano Jobs, "
        f"{len(gangs)} PodGroups), "
        f"finished {finished}, lost {submitted - finished}; {tally.pods} pods left, "
        "0 partial, 0 double binds, 0 orphans, "
        f"settled {done - arrived:.0f} s after the last arrival; admission (Volcano Job create) p99 "
        f"{p99(admission) * 1000:.0f} ms; pod created -> bound p99 {p99(pod_latency):.2f} s "
        f"({len(pod_latency)} pods timed); job created -> gang bound p99 {p99(job_latency):.2f} s "
        f"({len(job_latency)} jobs timed); test process RSS MiB (open sockets) over time: "
        f"{samples} (peak {peak:.0f}; last quarter {growth:+.0f} MiB over the second){heap}"
    )
