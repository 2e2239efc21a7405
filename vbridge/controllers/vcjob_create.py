"""Pod creates and deletes for Volcano Jobs, paced to the apiserver (pure part:
``bridge.vcjobcontrol.pacing``).

- Rate: every call takes a token from its job's bucket (``VCJOB_JOB_QPS``/``VCJOB_JOB_BURST``)
  and then from the controller's (``VCJOB_POD_QPS``/``VCJOB_POD_BURST``), waiting its turn
  before it holds anything, so one job never has more than its share and never holds the
  slots another job's calls need.
- Concurrency: at most ``VCJOB_CREATE_IN_FLIGHT`` calls in flight for the whole controller.
- The apiserver's own signals: an answer 429 (max-in-flight, priority and fairness) or 5xx with
  ``Retry-After`` is sent again by ``bridge.k8s.client`` after that wait, at most ten times, the
  call holding its slot meanwhile: a throttling apiserver slows every caller here to
  ``VCJOB_CREATE_IN_FLIGHT`` calls per Retry-After, never a storm. What still fails is a failure
  of that pod (below). No FlowSchema of our own: the chart's ServiceAccount falls under the
  default ``service-accounts`` schema (level ``workload-low``, below kube-controller-manager,
  apart from users' ``global-default``, fair-queued per ServiceAccount); the buckets are what
  paces us where APF does not (``system:masters`` credentials are exempt).
- Slow start (kube's ``slowStartBatch``): a job's creates go out in batches of 1, 2, 4, ...,
  each batch only once the last one was all made, none after a failure: a template the
  apiserver refuses or chokes on costs one call per attempt, not one per pod.
- Deletion: before each call ``live()`` is asked (the job is still in the cache, same uid, no
  deletionTimestamp); once it says no nothing more is sent, and the controller cancels what is
  in flight when the watch brings the deletion.

What could not be created comes back as ``creation.Failure`` values for the controller to
report and retry with backoff.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from bridge import defaults, errors, ratelimit
from bridge.k8s import client, paths
from bridge.vcjobcontrol import creation
from bridge.vcjobcontrol import pacing as vcjob_pacing

__all__ = ["PACE", "Outcome", "Pace", "Pool"]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Pace:
    """The controller's pacing tunables (defaults and why: ``bridge.defaults``)."""

    in_flight: int = defaults.VCJOB_CREATE_IN_FLIGHT  # calls in flight, all jobs together
    qps: float = defaults.VCJOB_POD_QPS  # creates and deletes a second, all jobs together
    burst: int = defaults.VCJOB_POD_BURST
    job_qps: float = defaults.VCJOB_JOB_QPS  # ... for one job
    job_burst: int = defaults.VCJOB_JOB_BURST
    wave_least: int = defaults.VCJOB_WAVE_LEAST  # unplaced pods a job may hold beyond its gang (waves)
    wave_most: int = defaults.VCJOB_WAVE_MOST


PACE = Pace()


@dataclasses.dataclass
class Outcome:
    made: set[str] = dataclasses.field(default_factory=set)  # created now, or there already (409)
    failures: list[creation.Failure] = dataclasses.field(default_factory=list)  # in the order they happened


class Pool:
    def __init__(self, api: client.Client, pace: Pace = PACE) -> None:
        self.api = api
        self._slots = asyncio.Semaphore(pace.in_flight)
        self._overall = ratelimit.Bucket(pace.qps, pace.burst)
        self._job_rate = (pace.job_qps, pace.job_burst)
        self._jobs: dict[str, ratelimit.Bucket] = {}
        self.in_flight = 0
        self.most_in_flight = 0  # the highest number of calls seen in flight at once

    def forget(self, job: str) -> None:
        """A deleted job's bucket goes with it."""
        self._jobs.pop(job, None)

    async def _pace(self, job: str) -> None:
        """Wait for a token of the job's bucket, then of the controller's."""
        loop = asyncio.get_running_loop()
        mine = self._jobs.get(job)
        if mine is None:
            mine = self._jobs[job] = ratelimit.Bucket(*self._job_rate)
        for bucket in (mine, self._overall):
            wait = bucket.take(loop.time())
            if wait > 0:
                try:
                    await asyncio.sleep(wait)
                except asyncio.CancelledError:
                    bucket.give_back(loop.time())
                    raise

    async def _each(
        self, job: str, items: Iterable[T], call: Callable[[T], Awaitable[None]], live: Callable[[], bool]
    ) -> None:
        async def one(item: T) -> None:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                await call(item)
            finally:
                self.in_flight -= 1
                self._slots.release()

        async with asyncio.TaskGroup() as group:
            for item in items:
                if not live():
                    break
                await self._pace(job)  # in turn, holding nothing
                if not live():
                    break
                await self._slots.acquire()  # a task is started only once a slot is free
                group.create_task(one(item))

    async def create(
        self,
        namespace: str,
        bodies: Iterable[dict[str, Any]],
        *,
        job: str,
        live: Callable[[], bool] = lambda: True,
    ) -> Outcome:
        """POST the pods in slow-start batches (409: it exists, fine), while ``live()``; the pods
        not in ``made`` were not created (failed, or never sent)."""
        outcome = Outcome()
        path = paths.resource("v1", "pods", namespace=namespace)

        async def post(body: dict[str, Any]) -> None:
            name = body["metadata"]["name"]
            try:
                await self.api.request("POST", path, body=body)
                outcome.made.add(name)
            except errors.ApiError as exc:
                if exc.status == 409:
                    outcome.made.add(name)
                else:
                    outcome.failures.append(creation.Failure(name, exc.status, exc.message or str(exc)))
            except client.TRANSPORT_ERRORS as exc:
                outcome.failures.append(creation.Failure(name, 0, f"{type(exc).__name__} {exc}".strip()))

        pending = iter(bodies)  # built as they are sent: a 10,000-pod gang is not held at once
        for size in vcjob_pacing.batches():
            batch = list(itertools.islice(pending, size))
            if not batch or not live():
                break
            await self._each(job, batch, post, live)
            if outcome.failures:
                break
        return outcome

    async def delete(self, namespace: str, pod_names: Iterable[str], *, job: str) -> None:
        """DELETE each pod (404: gone already, fine); other errors are raised after all were tried."""
        problems: list[BaseException] = []

        async def delete(name: str) -> None:
            try:
                await self.api.request("DELETE", paths.resource("v1", "pods", namespace=namespace, name=name))
            except errors.ApiError as exc:
                if exc.status != 404:
                    problems.append(exc)
            except client.TRANSPORT_ERRORS as exc:
                problems.append(exc)

        await self._each(job, pod_names, delete, lambda: True)
        if problems:
            raise problems[0]
