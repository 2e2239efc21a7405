"""The job stream of ``bench/scheduler_churn.py``: jobs arrive at a steady rate, are bound, run, finish.

``Stream.run`` creates one job every ``1/rate`` seconds for ``seconds`` (sizes drawn from
``sizes`` with ``weights``; a job is a PodGroup of minMember = its size and its pods, or with
``gangs=False`` bare pods for kube-scheduler), deletes each job ``lifetime`` seconds after its
last member was bound (pods with grace 0, then its PodGroup), samples the scheduler's RSS and
CPU every ``sample`` seconds, and then waits up to ``drain`` seconds for the pods still pending.
Times are ``time.perf_counter``; a pod's latency is from its create's answer to the watch seeing
it bound, a gang's from its first member created to its last member bound.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import pathlib
import random
import time
import urllib.request

from bridge.k8s import client, paths
from compare import clock, workloads

NS = "churn"


@dataclasses.dataclass
class Job:
    name: str
    pods: list[str]
    first_created: float = 0.0
    done: float = 0.0  # last member bound


@dataclasses.dataclass
class Stream:
    rate: float  # jobs per second
    seconds: float
    lifetime: float
    sizes: tuple[int, ...]
    weights: tuple[int, ...]
    gangs: bool
    scheduler_name: str
    sample: float = 5.0
    drain: float = 60.0
    seed: int = 17
    jobs: list[Job] = dataclasses.field(default_factory=list)
    samples: list[tuple[float, float, float]] = dataclasses.field(default_factory=list)  # (t, RSS MB, CPU s)
    clock: clock.BindClock = dataclasses.field(default_factory=lambda: clock.BindClock(NS))
    start: float = 0.0

    async def _create(self, api: client.Client, job: Job, size: int) -> None:
        if self.gangs:
            pg = {"apiVersion": workloads.PG_API, "kind": "PodGroup", "metadata": {"name": job.name}}
            pg["spec"] = {"minMember": size, "queue": "default"}
            await api.request("POST", paths.resource(workloads.PG_API, "podgroups", namespace=NS), body=pg)
        job.first_created = time.perf_counter()

        async def one(i: int) -> None:
            body = workloads.pod_body(job.pods[i], job.name if self.gangs else None, self.scheduler_name)
            await api.request("POST", paths.resource("v1", "pods", namespace=NS), body=body)
            self.clock.created[job.pods[i]] = time.perf_counter()

        await workloads.gather(size, one, 16)

    async def _finish(self, api: client.Client, job: Job) -> None:
        opts = {"gracePeriodSeconds": 0}
        for pod in job.pods:
            path = paths.resource("v1", "pods", namespace=NS, name=pod)
            await api.request("DELETE", path, body=opts)
        if self.gangs:
            path = paths.resource(workloads.PG_API, "podgroups", namespace=NS, name=job.name)
            await api.request("DELETE", path)

    async def _reaper(self, api: client.Client) -> None:
        """Marks jobs done when their last member is bound; deletes them ``lifetime`` later."""
        live: list[Job] = []
        while True:
            now = time.perf_counter()
            for job in self.jobs:
                if not job.done and job.pods and all(p in self.clock.bound for p in job.pods):
                    job.done = max(self.clock.bound[p] for p in job.pods)
                    live.append(job)
            due = [j for j in live if now - j.done >= self.lifetime]
            live = [j for j in live if now - j.done < self.lifetime]
            await asyncio.gather(*(self._finish(api, j) for j in due))
            await asyncio.sleep(0.5)

    async def _sampler(self, pid: int | None) -> None:
        while True:
            self.samples.append((time.perf_counter() - self.start, clock.rss(pid), clock.cpu_seconds(pid)))
            await asyncio.sleep(self.sample)

    async def run(self, api: client.Client, pid: int | None, alive: object) -> str:
        """The stream against a scheduler already started (process ``pid``); '' or why it ended early."""
        rng = random.Random(self.seed)
        follow = asyncio.create_task(self.clock.follow(api))
        await self.clock.synced.wait()
        self.start = time.perf_counter()
        side = [asyncio.create_task(self._reaper(api)), asyncio.create_task(self._sampler(pid))]
        creating: list[asyncio.Task[None]] = []
        why = ""
        try:
            k = 0
            while (at := self.start + k / self.rate) < self.start + self.seconds:
                await asyncio.sleep(max(0.0, at - time.perf_counter()))
                if callable(alive) and not alive():
                    why = "the scheduler exited"
                    break
                size = rng.choices(self.sizes, self.weights)[0]  # bare pods when not gangs
                job = Job(f"j{k}", [f"j{k}-{i}" for i in range(size)])
                self.jobs.append(job)
                creating.append(asyncio.create_task(self._create(api, job, size)))
                k += 1
            await asyncio.gather(*creating)
            names = [p for j in self.jobs for p in j.pods]
            why = why or await self.clock.wait(names, time.perf_counter() + self.drain, lambda: True)
            self.samples.append((time.perf_counter() - self.start, clock.rss(pid), clock.cpu_seconds(pid)))
        finally:
            for task in [*side, follow]:
                task.cancel()
            await asyncio.gather(*side, follow, return_exceptions=True)
        return why


def cycle_quantiles(port: int, qs: tuple[float, ...] = (0.5, 0.99)) -> list[float]:
    """From ``volcano_e2e_scheduling_latency_milliseconds`` on ``/metrics`` (ours and Volcano share its
    buckets, 5 ms × 2⁰…2⁹): for each quantile the upper bound of the bucket that holds it, in ms
    (inf above the last bucket); [] when the scrape fails or has no cycles."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return []
    buckets: list[tuple[float, float]] = []
    for line in text.splitlines():
        if line.startswith("volcano_e2e_scheduling_latency_milliseconds_bucket"):
            le = line.partition('le="')[2].partition('"')[0]
            buckets.append((float(le), float(line.rsplit(" ", 1)[1])))
    buckets.sort()
    total = buckets[-1][1] if buckets else 0.0
    if not total:
        return []
    return [next(le for le, n in buckets if n >= q * total) for q in qs]


BACKLOG_NS = "backlog"
BACKLOG_QUEUE = "backlog"


@dataclasses.dataclass
class Backlog:
    """The big tenant of the ``backlog`` stream: ``pods`` pods created at once in their own namespace
    and queue, half of them in gangs of ``gang`` and half single (PodGroups of minMember 1; bare
    pods when the contender has no gangs), each asking ``cpu`` of a node's 32 CPUs, so that one a
    node fits and the rest of each node stays free for the small tenant."""

    pods: int
    gang: int = 100
    cpu: str = "24"
    gangs: bool = True
    scheduler_name: str = "volcano"

    def groups(self) -> list[tuple[str, int]]:
        """(PodGroup name, members): the gangs first, then the singles."""
        in_gangs = (self.pods // 2) // self.gang * self.gang
        return [(f"big-g{i}", self.gang) for i in range(in_gangs // self.gang)] + [
            (f"big-s{i}", 1) for i in range(self.pods - in_gangs)
        ]

    async def submit(self, api: client.Client) -> None:
        await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": BACKLOG_NS}})
        kind = workloads.Kind(queue=BACKLOG_QUEUE, cpu=self.cpu)
        groups = self.groups()
        pods = [(f"{group}-{i}", group) for group, size in groups for i in range(size)]
        if self.gangs:
            await workloads.make_queue(api, BACKLOG_QUEUE, 1)
            pg_path = paths.resource(workloads.PG_API, "podgroups", namespace=BACKLOG_NS)

            async def make_pg(i: int) -> None:
                name, size = groups[i]
                spec = {"minMember": size, "queue": BACKLOG_QUEUE}
                body = {"apiVersion": workloads.PG_API, "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}
                await api.request("POST", pg_path, body=body)

            await workloads.gather(len(groups), make_pg, workloads.SETUP_CONNECTIONS)
        pod_path = paths.resource("v1", "pods", namespace=BACKLOG_NS)

        async def make_pod(i: int) -> None:
            name, group = pods[i]
            body = workloads.pod_body(name, group if self.gangs else None, self.scheduler_name, kind)
            await api.request("POST", pod_path, body=body)

        await workloads.gather(len(pods), make_pod, workloads.SETUP_CONNECTIONS)


def requests_by_agent(audit_log: pathlib.Path, seconds: float) -> dict[str, dict[str, float]]:
    """From an apiserver audit log: each client's requests per second by verb, over ``seconds``;
    the client is its User-Agent's program name (``vbridge-scheduler``, ``kube-scheduler``, ...)."""
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    if audit_log.exists():
        with audit_log.open() as lines:
            for line in lines:
                event = json.loads(line)
                agent = (event.get("userAgent") or "?").split("/", 1)[0].split(" ", 1)[0]
                counts[agent][event.get("verb") or "?"] += 1
    return {agent: {verb: n / max(seconds, 1e-9) for verb, n in verbs.items()} for agent, verbs in counts.items()}
