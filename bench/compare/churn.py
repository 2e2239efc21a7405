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
import dataclasses
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
                size = rng.choices(self.sizes, self.weights)[0] if self.gangs else 1
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
