"""Volcano Jobs (``batch.volcano.sh/v1alpha1``): the I/O around ``bridge.vcjobcontrol``
(the controller's decisions) and ``bridge.adapters.vcjob`` (the Job's translation).

Three watches (Jobs, their pods, their PodGroups) fill one cache (``vcjob_cache``); a sync
reads the Job and its pods from there, never from the apiserver. Work is coalesced per job: an
event marks the job dirty (a pod's event also queues the request it raises, judged when it
happens: PodFailed, PodEvicted, TaskCompleted, TaskFailed; a PodGroup's: Unknown); one sync per
job runs at a time, at most ``VCJOB_SYNC_WORKERS`` jobs at once, and events during a sync cause
exactly one more. A sync takes the first queued request whose policy names an action (the
others wait: after a restart they are news from an older version and only sync), then makes
the PodGroup and the plugins' objects (owned by the Job), runs one step of the state machine,
writes the status first (a raised version turns the deletions that follow into news from a
previous run, which cannot restart the job again), deletes and creates pods through one
paced pool (``vcjob_create``: token buckets per job and overall, slow-start batches), and
records an Event on a phase change. The PodGroup and the plugins' objects: ``vcjob_owned``.

Pods are created only once the PodGroup has left Pending: the scheduler's enqueue step admits
the whole gang first (Volcano's delay-pod-creation); a task with ``dependsOn`` has its pods
made by the first sync after the tasks it names run (``bridge.vcjobcontrol.starting``; every
pod change of the job causes a sync). Unlike Volcano, which then makes every pod, the gang's
pods are made together and the rest in waves as the scheduler places them
(``bridge.vcjobcontrol.waves``): a 10,000-replica job on a small cluster holds at most a few
hundred pending pods. Pods that cannot be created are reported (a Warning ``FailedCreatePod``
Event with the apiserver's message and the time of the next attempt, the reason in
``status.state``) and tried again with a backoff per job that doubles, longer after a refusal
or a timeout than after a fault. A job that is deleted, or gets a deletionTimestamp, stops at
once: the watch event cancels its sync with the creates in flight, its timers and requests
go, and each create first asks whether the job is still there. A finished job gives its
PodGroup back, as the other job kinds do; ``ttlSecondsAfterFinished`` then deletes the job
itself.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import Callable
from typing import Any

from bridge import bus, defaults, errors, patching
from bridge import facts as cluster_facts
from bridge.adapters.vcjob import names, pods, spec
from bridge.k8s import client, events, paths, watching
from bridge.vcjobcontrol import creation, lifecycle, waves
from vbridge.controllers import podgroup_io, vcjob_cache, vcjob_create, vcjob_owned

__all__ = ["COMMANDS", "JOBS", "Obj", "VcJobController"]

log = logging.getLogger(__name__)
JOBS = names.API_VERSION
COMMANDS = bus.JOB_ACTIONS
Obj = dict[str, Any]


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _stamp(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


async def _ignore(status: int, call: Any) -> None:
    try:
        await call
    except errors.ApiError as exc:
        if exc.status != status:
            raise


class VcJobController:
    def __init__(
        self,
        api: client.Client,
        *,
        scheduler_name: str = defaults.SCHEDULER_NAME,
        native: bool = False,
        pace: vcjob_create.Pace = vcjob_create.PACE,
        workers: int = defaults.VCJOB_SYNC_WORKERS,
        facts: cluster_facts.View | None = None,
    ) -> None:
        """``facts``: the namespaces and queues, to refuse a queue that does not admit the job's
        namespace (one the webhook skips, as kube-system); None: not checked here."""
        self.api = api
        self.facts = facts
        self.scheduler_name = scheduler_name
        # Native backend: pods are made at once, each gated by its queue (``keys.QUEUE_GATE``),
        # instead of after the scheduler moves the group out of Pending.
        self.native = native
        self.cache = vcjob_cache.Cache()
        self.pace = pace
        self.pool = vcjob_create.Pool(api, pace)
        self._workers = asyncio.Semaphore(workers)
        self._requests: dict[str, list[lifecycle.Request]] = {}  # job key -> requests not yet carried out
        self._dirty: set[str] = set()
        self._running: dict[str, asyncio.Task[None]] = {}  # job key -> its one worker
        self._synced = {w: asyncio.Event() for w in ("jobs", "pods", "groups")}
        self._defaulted: dict[str, tuple[str, Obj]] = {}  # job key -> (resourceVersion, defaulted job)
        self._made: set[str] = set()  # job uids whose PodGroup and plugin objects exist
        self._refused: set[str] = set()  # job uids reported as unusable (one Event each)
        self._failures: dict[str, int] = {}  # job key -> rounds of failed creates or syncs in a row
        self._create_after: dict[str, float] = {}  # job key -> monotonic time before which no create is tried
        self._timers: dict[str, tuple[float, asyncio.TimerHandle]] = {}  # job key -> (when, its next sync)
        self._tasks: set[asyncio.Task[None]] = set()
        self.syncs = 0  # syncs run, for tests and metrics

    async def run(self) -> None:
        try:
            await asyncio.gather(
                self._follow(paths.resource(JOBS, "jobs"), {}, self._on_job, "jobs"),
                self._follow(paths.resource("v1", "pods"), {"labelSelector": names.JOB_NAME}, self._on_pod, "pods"),
                self._follow(
                    paths.resource(podgroup_io.PG, "podgroups"),
                    {"labelSelector": names.JOB_NAME},
                    self._on_group,
                    "groups",
                ),
            )
        finally:
            for task in [*self._tasks, *self._running.values()]:
                task.cancel()
            await asyncio.gather(*self._tasks, *self._running.values(), return_exceptions=True)

    async def _follow(self, path: str, params: dict[str, Any], apply: Callable[[str, Obj], None], what: str) -> None:
        await watching.follow(self.api, path, apply, params=params, on_synced=self._synced[what].set)

    # -- events to work --------------------------------------------------------------------------

    def _job(self, key: str) -> Obj | None:
        """The cached job with Volcano's defaults (computed once per resourceVersion); raises
        InvalidObjectError for a job admission should have refused."""
        raw = self.cache.jobs.get(key)
        if raw is None:
            return None
        rv = str(raw["metadata"].get("resourceVersion", ""))
        hit = self._defaulted.get(key)
        if hit is not None and rv and hit[0] == rv:
            return hit[1]
        job = spec.defaulted(raw, scheduler_name=self.scheduler_name)
        self._defaulted[key] = (rv, job)
        return job

    def _on_job(self, kind: str, job: Obj) -> None:
        key = self.cache.on_job(kind, job)
        if kind == "DELETED" or (job.get("metadata") or {}).get("deletionTimestamp"):
            self._stop(key)
            return
        self._mark(key)

    def _stop(self, key: str) -> None:
        """A job deleted or being deleted: its sync in flight is cancelled (with the creates it has
        in flight; none is sent after this), its retries and requests are dropped."""
        self._defaulted.pop(key, None)
        self._requests.pop(key, None)
        self._failures.pop(key, None)
        self._create_after.pop(key, None)
        self._dirty.discard(key)
        self.pool.forget(key)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer[1].cancel()
        worker = self._running.pop(key, None)
        if worker is not None:
            worker.cancel()

    def _live(self, key: str, uid: str) -> bool:
        """Whether the job ``uid`` is still there and not being deleted (asked before each create)."""
        meta = (self.cache.jobs.get(key) or {}).get("metadata") or {}
        return meta.get("uid") == uid and not meta.get("deletionTimestamp")

    def _on_pod(self, kind: str, pod: Obj) -> None:
        change = self.cache.on_pod(kind, pod)
        if change is None:
            return
        request = None
        try:
            job = self._job(change.job)
        except errors.InvalidObjectError:
            job = None
        owners = (change.obj.get("metadata") or {}).get("ownerReferences") or []
        if job is not None and any(r.get("uid") == job["metadata"].get("uid") for r in owners):
            # O(1) per event: the task's pods are read only for a pod that restarted in place.
            task = names.pod_task(change.obj)
            restarted = not change.deleted and lifecycle.restarts(change.obj) > 0
            observed = self.cache.task_pods(change.job, task, job["metadata"]["uid"]) if restarted else []
            request = lifecycle.detect(
                job,
                change.before,
                change.obj,
                observed,
                deleted=change.deleted,
                succeeded=self.cache.succeeded(change.job, task),
            )
        self._mark(change.job, request)

    def _on_group(self, kind: str, group: Obj) -> None:
        change = self.cache.on_group(kind, group)
        if change is not None:
            self._mark(change.job, None if change.deleted else lifecycle.detect_group(change.before, change.obj))

    def _mark(self, key: str, request: lifecycle.Request | None = None) -> None:
        """The job needs a sync; ``request`` (a pod's or group's news) is carried out by one."""
        if request is not None and request != lifecycle.Request():
            self._requests.setdefault(key, []).append(request)
        self._dirty.add(key)
        if key not in self._running:
            self._running[key] = asyncio.create_task(self._worker(key))

    def _later(self, key: str, delay: float) -> None:
        """Sync ``key`` again in ``delay`` seconds (one timer a job: the sooner one stands)."""
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        current = self._timers.get(key)
        if current is not None and current[0] <= when and not current[1].cancelled():
            return
        if current is not None:
            current[1].cancel()

        def fire() -> None:
            self._timers.pop(key, None)
            self._mark(key)

        self._timers[key] = (when, loop.call_at(when, fire))

    async def _worker(self, key: str) -> None:
        try:
            for ready in self._synced.values():
                await ready.wait()  # act on whole caches only: an empty one would recreate every pod
            async with self._workers:
                while key in self._dirty:
                    self._dirty.discard(key)
                    requests = self._requests.pop(key, [])
                    try:
                        rest = await self.sync(key, requests)
                    except asyncio.CancelledError:
                        raise
                    except Exception as exc:
                        # Volcano requeues a failed sync with a growing delay; so do we, keeping its requests.
                        log.exception("syncing Job %s failed", key)
                        failed = self._failures[key] = self._failures.get(key, 0) + 1
                        status = exc.status if isinstance(exc, errors.ApiError) else 0
                        self._later(key, creation.retry_after(failed, [creation.Failure("", status, str(exc))]))
                        self._requests[key] = requests + self._requests.get(key, [])
                        break
                    if rest:
                        self._requests[key] = rest + self._requests.get(key, [])
                        self._dirty.add(key)
        finally:
            if self._running.get(key) is asyncio.current_task():
                self._running.pop(key)

    # -- one sync --------------------------------------------------------------------------------

    async def sync(self, key: str, requests: list[lifecycle.Request]) -> list[lifecycle.Request]:
        """Carry out one request (or a plain sync); the requests left for the next round."""
        self.syncs += 1
        raw = self.cache.jobs.get(key)
        if raw is None or raw["metadata"].get("deletionTimestamp"):
            return []
        try:
            job = self._job(key)
            too_many = job is not None and spec.pod_count(job) > defaults.VCJOB_MAX_PODS
        except errors.InvalidObjectError as exc:
            job, too_many = None, False
            await self._refuse(raw, str(exc))
        if job is None:
            return []
        if too_many:
            await self._refuse(job, f"{spec.pod_count(job)} pods; at most {defaults.VCJOB_MAX_PODS} pods per Job")
            return []
        meta = job["metadata"]
        namespace, name, uid = meta["namespace"], meta["name"], meta["uid"]
        observed = self.cache.pods(key, uid)
        command = (meta.get("annotations") or {}).get(names.COMMAND)
        rest: list[lifecycle.Request] = []
        if command:
            request = lifecycle.Request(event="CommandIssued", action=command if command in COMMANDS else "SyncJob")
            rest = requests
        else:
            acting = [r for r in requests if lifecycle.action_for(job, r) != "SyncJob"]
            request, rest = (acting[0], acting[1:]) if acting else (lifecycle.Request(), [])
        phase = ((job.get("status") or {}).get("state") or {}).get("phase") or "Pending"
        if phase not in spec.FINISHED and uid not in self._made:
            if (refused := self._refusal(job)) is not None:
                await self._refuse(job, f"PodGroup not made: {refused}", reason="QueueNotAllowed")
                return []
            await vcjob_owned.make(self.api, job)
            self._made.add(uid)
        now = _now()
        plan = lifecycle.step(job, observed, request, now=_stamp(now))
        job_after = {**job, "status": plan.status}
        await self._write_status(job, plan.status)
        if command:
            path = paths.resource(JOBS, "jobs", namespace=namespace, name=name)
            body = {"metadata": {"annotations": {names.COMMAND: None}}}
            self.cache.wrote_job(await self.api.request("PATCH", path, body=body, content_type=client.MERGE))
        for pod_name in plan.delete:
            self.cache.deleting(key, pod_name)
        await self.pool.delete(namespace, plan.delete, job=key)
        # Read again after the writes above: a pod the watch brought meanwhile is no longer expected.
        in_flight = self.cache.in_flight(key, time.monotonic())
        now_seen = self.cache.pods(key, uid)
        there = in_flight | {p["metadata"]["name"] for p in now_seen}
        missing = [(t, i) for t, i in plan.create if names.pod(name, t, i) not in there]
        # The gang at once, the rest in waves as the scheduler places them (a placement is a pod
        # event, hence a sync): never thousands of pods the cluster cannot hold.
        create = waves.release(
            job_after, now_seen, missing, expected=len(in_flight), least=self.pace.wave_least, most=self.pace.wave_most
        )
        group = self.cache.group(key, names.podgroup(job))
        admitted = group is not None and (
            self.native or ((group.get("status") or {}).get("phase") or "Pending") != "Pending"
        )
        wait = self._create_after.get(key, 0.0) - time.monotonic()
        if create and admitted and wait > 0:
            self._later(key, wait)  # the last attempt failed: not before its backoff has passed
        elif create and admitted:
            asked = [names.pod(name, t, i) for t, i in create]
            self.cache.creating(key, asked, time.monotonic())
            bodies = (pods.build(job_after, task=t, index=i, native=self.native) for t, i in create)
            outcome = await self.pool.create(namespace, bodies, job=key, live=lambda: self._live(key, uid))
            for pod_name in asked:
                if pod_name not in outcome.made:
                    self.cache.not_created(key, pod_name)
            if outcome.failures:
                await self._failed_creates(key, job_after, outcome.failures)
            elif self._failures.pop(key, None) is not None:
                self._create_after.pop(key, None)
                await self._write_status(job_after, creation.cleared(job_after["status"]))
        if plan.message:
            reason = plan.action if plan.action != "SyncJob" else plan.phase
            await events.emit(self.api, job, reason=reason, message=plan.message, warning=plan.phase == "Failed")
        if plan.phase in spec.FINISHED:
            await self._finish(job_after, now, group_left=group is not None)
        return rest

    async def _write_status(self, job: Obj, status: Obj) -> None:
        if status == job.get("status"):
            return
        meta = job["metadata"]
        path = paths.resource(JOBS, "jobs", namespace=meta["namespace"], name=meta["name"], subresource="status")
        body = {"status": patching.merge_patch(job.get("status") or {}, status)}
        self.cache.wrote_job(await self.api.request("PATCH", path, body=body, content_type=client.MERGE))

    async def _failed_creates(self, key: str, job: Obj, failures: list[creation.Failure]) -> None:
        """Volcano's FailedCreatePod Event, the reason in the status, and another try later."""
        attempt = self._failures[key] = self._failures.get(key, 0) + 1
        delay = creation.retry_after(attempt, failures)
        self._create_after[key] = time.monotonic() + delay
        message = creation.message(failures, delay)
        log.warning("Job %s: %d pods not created (attempt %d): %s", key, len(failures), attempt, message)
        await events.emit(self.api, job, reason=creation.REASON, message=message, warning=True)
        await self._write_status(job, creation.noted(job["status"], failures, delay))
        self._later(key, delay)

    def _refusal(self, job: Obj) -> str | None:
        if self.facts is None:
            return None
        ctx = self.facts.context(job["metadata"]["namespace"], scheduler_name=self.scheduler_name)
        return ctx.refusal(str(job["spec"].get("queue") or defaults.DEFAULT_QUEUE))

    async def _refuse(self, job: Obj, why: str, *, reason: str = "InvalidJob") -> None:
        uid = job["metadata"].get("uid", "")
        if uid not in self._refused:
            self._refused.add(uid)
            await events.emit(self.api, job, reason=reason, message=why, warning=True)

    async def _finish(self, job: dict[str, Any], now: datetime.datetime, *, group_left: bool) -> None:
        """Give the queue back (delete the PodGroup); delete the job once its TTL has passed."""
        meta = job["metadata"]
        if group_left:
            path = paths.resource(podgroup_io.PG, "podgroups", namespace=meta["namespace"], name=names.podgroup(job))
            await _ignore(404, self.api.request("DELETE", path))
        ttl = job["spec"].get("ttlSecondsAfterFinished")
        since = (job["status"].get("state") or {}).get("lastTransitionTime")
        if ttl is None or not since:
            return
        due = datetime.datetime.strptime(since, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
        left = (due + datetime.timedelta(seconds=int(ttl)) - now).total_seconds()
        if left <= 0:
            path = paths.resource(JOBS, "jobs", namespace=meta["namespace"], name=meta["name"])
            await _ignore(404, self.api.request("DELETE", path, body={"propagationPolicy": "Background"}))
        else:
            self._later(vcjob_cache.job_key(meta["namespace"], meta["name"]), left)
