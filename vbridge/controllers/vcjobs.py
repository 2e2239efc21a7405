"""Volcano Jobs (``batch.volcano.sh/v1alpha1``): the I/O around ``bridge.vcjob``.

Three watches (Jobs, their pods, their PodGroups) feed one reconcile per job at a time (a lock
per job). Each reconcile reads the Job and lists its pods fresh, so decisions never rest on a
stale cache, then: makes the PodGroup and the plugins' objects (owned by the Job, so the
garbage collector removes them with it), runs one step of the state machine, writes the status
first (a raised version turns the deletions that follow into news from a previous run, which
cannot restart the job again), deletes and creates pods, and records an Event on a phase change.

Pods are created only once the PodGroup has left Pending: the scheduler's enqueue step admits
the whole gang first (Volcano's delay-pod-creation). A finished job gives its PodGroup back, as
the other job kinds do; ``ttlSecondsAfterFinished`` then deletes the job itself.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bridge import defaults, errors, podgroups
from bridge.adapters.vcjob import lifecycle, names, plugins, podgroup, pods, spec
from bridge.k8s import client, events, paths, watching
from vbridge.controllers import podgroup_io

__all__ = ["COMMANDS", "VcJobController", "new_keypair"]

log = logging.getLogger(__name__)
JOBS = names.API_VERSION
COMMANDS = ("AbortJob", "ResumeJob", "RestartJob", "TerminateJob", "CompleteJob")
Change = tuple[str | None, dict[str, Any], bool]  # (phase seen before, pod, deleted)


def new_keypair() -> plugins.KeyPair:
    """A fresh RSA-2048 key pair for the ssh plugin (random, hence here and not in the core)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return plugins.KeyPair(private_pem=private.decode(), public_openssh=public.decode() + "\n")


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _stamp(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


async def _ignore(status: int, call: Awaitable[Any]) -> None:
    try:
        await call
    except errors.ApiError as exc:
        if exc.status != status:
            raise


class VcJobController:
    def __init__(self, api: client.Client, *, scheduler_name: str = defaults.SCHEDULER_NAME) -> None:
        self.api = api
        self.scheduler_name = scheduler_name
        self._phases: dict[str, str] = {}  # pod uid -> phase last seen, to tell transitions
        self._locks: dict[str, asyncio.Lock] = {}
        self._queued_syncs: set[str] = set()  # a waiting plain sync makes another one redundant
        # Pod deletions not yet handled, per job: until then a sync must not replace the pod, or
        # the eviction policy (RestartJob) would find a fresh member and kill it again.
        self._queued_deletions: dict[str, int] = {}
        # Pod names the pod watch holds, per job. A fresh list can be ahead of the watch; a pod
        # the list lost but the watch still holds is not replaced until its deletion is handled.
        self._seen: dict[str, set[str]] = {}
        self._made: set[str] = set()  # job uids whose PodGroup and plugin objects exist
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        try:
            await asyncio.gather(
                self._follow(paths.resource(JOBS, "jobs"), {}, self._on_job),
                self._follow(paths.resource("v1", "pods"), {"labelSelector": names.JOB_NAME}, self._on_pod),
                self._follow(
                    paths.resource(podgroup_io.PG, "podgroups"), {"labelSelector": names.JOB_NAME}, self._on_group
                ),
            )
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _follow(self, path: str, params: dict[str, Any], apply: Callable[[str, dict[str, Any]], None]) -> None:
        await watching.follow(self.api, path, apply, params=params)

    # -- events to work --------------------------------------------------------------------------

    def _on_job(self, kind: str, job: dict[str, Any]) -> None:
        meta = job.get("metadata") or {}
        if kind != "DELETED":
            self._enqueue(meta.get("namespace", ""), meta.get("name", ""), None)

    def _on_pod(self, kind: str, pod: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        job_name = (meta.get("labels") or {}).get(names.JOB_NAME)
        if not job_name:
            return  # a relisted deletion carries no labels: nothing to attribute it to
        uid = meta.get("uid", "")
        seen = self._seen.setdefault(f"{meta.get('namespace', '')}/{job_name}", set())
        if kind == "DELETED":
            seen.discard(meta.get("name", ""))
        else:
            seen.add(meta.get("name", ""))
        before = self._phases.pop(uid, None) if kind == "DELETED" else self._phases.get(uid)
        if kind != "DELETED":
            self._phases[uid] = (pod.get("status") or {}).get("phase") or "Pending"
        self._enqueue(meta.get("namespace", ""), job_name, (before, pod, kind == "DELETED"))

    def _on_group(self, kind: str, group: dict[str, Any]) -> None:
        meta = group.get("metadata") or {}
        if kind != "DELETED":
            self._enqueue(meta.get("namespace", ""), (meta.get("labels") or {})[names.JOB_NAME], None)

    def _enqueue(self, namespace: str, name: str, change: Change | None) -> None:
        key = f"{namespace}/{name}"
        if change is None:
            if key in self._queued_syncs:
                return
            self._queued_syncs.add(key)
        elif change[2]:
            self._queued_deletions[key] = self._queued_deletions.get(key, 0) + 1
        task = asyncio.create_task(self._serialized(key, namespace, name, change))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serialized(self, key: str, namespace: str, name: str, change: Change | None) -> None:
        async with self._locks.setdefault(key, asyncio.Lock()):
            if change is None:
                self._queued_syncs.discard(key)
            elif change[2]:
                self._queued_deletions[key] -= 1
            try:
                await self.reconcile(namespace, name, change, may_create=not self._queued_deletions.get(key))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reconciling Job %s failed", key)

    # -- one reconcile ---------------------------------------------------------------------------

    async def reconcile(
        self, namespace: str, name: str, change: Change | None = None, *, may_create: bool = True
    ) -> None:
        try:
            job = await self.api.request("GET", paths.resource(JOBS, "jobs", namespace=namespace, name=name))
        except errors.ApiError as exc:
            if exc.status == 404:
                return  # deleted: the garbage collector removes what it owned
            raise
        if job["metadata"].get("deletionTimestamp"):
            return
        try:
            job = spec.defaulted(job, scheduler_name=self.scheduler_name)
        except errors.InvalidObjectError as exc:
            await events.emit(self.api, job, reason="InvalidJob", message=str(exc), warning=True)
            return
        uid = job["metadata"]["uid"]
        found = await self.api.request(
            "GET",
            paths.resource("v1", "pods", namespace=namespace),
            params={"labelSelector": f"{names.JOB_NAME}={name}"},
        )
        observed = [
            p
            for p in found.get("items", [])
            if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or [])
        ]
        command = (job["metadata"].get("annotations") or {}).get(names.COMMAND)
        if command:
            request = lifecycle.Request(event="CommandIssued", action=command if command in COMMANDS else "SyncJob")
        elif change is not None:
            before, pod, deleted = change
            request = lifecycle.detect(job, before, pod, observed, deleted=deleted)
        else:
            request = lifecycle.Request()
        phase = ((job.get("status") or {}).get("state") or {}).get("phase") or "Pending"
        if phase not in lifecycle.FINISHED and uid not in self._made:
            await self._make_owned(job)
            self._made.add(uid)
        now = _now()
        plan = lifecycle.step(job, observed, request, now=_stamp(now))
        job_after = {**job, "status": plan.status}
        if plan.status != job.get("status"):
            await self.api.request(
                "PATCH",
                paths.resource(JOBS, "jobs", namespace=namespace, name=name, subresource="status"),
                body={"status": plan.status},
                content_type=client.MERGE,
            )
        if command:
            await self.api.request(
                "PATCH",
                paths.resource(JOBS, "jobs", namespace=namespace, name=name),
                body={"metadata": {"annotations": {names.COMMAND: None}}},
                content_type=client.MERGE,
            )
        for pod_name in plan.delete:
            await _ignore(
                404, self.api.request("DELETE", paths.resource("v1", "pods", namespace=namespace, name=pod_name))
            )
        seen = self._seen.get(f"{namespace}/{name}", set())
        create = [(t, i) for t, i in plan.create if names.pod(name, t, i) not in seen]
        if create and may_create and await self._group_admitted(job):
            # All at once, as Volcano does: the scheduler should find the gang whole, not growing.
            base = paths.resource("v1", "pods", namespace=namespace)
            await asyncio.gather(
                *(
                    _ignore(409, self.api.request("POST", base, body=pods.build(job_after, task=t, index=i)))
                    for t, i in create
                )
            )
        if plan.message:
            reason = plan.action if plan.action != "SyncJob" else plan.phase
            await events.emit(self.api, job, reason=reason, message=plan.message, warning=plan.phase == "Failed")
        if plan.phase in lifecycle.FINISHED:
            await self._finish(job_after, now)

    async def _make_owned(self, job: dict[str, Any]) -> None:
        """The PodGroup, then the plugins' Service, ConfigMap and Secret, all owned by the job."""
        meta = job["metadata"]
        owner = podgroups.owner_ref(job)
        classes = await self.api.request("GET", paths.resource("scheduling.k8s.io/v1", "priorityclasses"))
        priorities = {c["metadata"]["name"]: int(c.get("value", 0)) for c in classes.get("items", [])}
        group = podgroup.build(job, priorities)
        group["metadata"]["ownerReferences"] = [owner]
        if await podgroup_io.ensure(self.api, group) == "created":
            spec_ = group["spec"]
            await events.emit(
                self.api,
                job,
                reason="PodGroupCreated",
                message=f"PodGroup {group['metadata']['name']}: minMember {spec_['minMember']}, queue {spec_['queue']}",
            )
        keys = None
        if "ssh" in (job["spec"].get("plugins") or {}):
            try:
                await self.api.request(
                    "GET", paths.resource("v1", "secrets", namespace=meta["namespace"], name=names.secret(meta["name"]))
                )
            except errors.ApiError as exc:
                if exc.status != 404:
                    raise
                keys = await asyncio.to_thread(new_keypair)  # ~0.1 s of CPU: keep the loop free
        for obj in plugins.objects(job, keys):
            obj["metadata"]["ownerReferences"] = [owner]
            plural = {"Service": "services", "ConfigMap": "configmaps", "Secret": "secrets"}[obj["kind"]]
            await _ignore(
                409, self.api.request("POST", paths.resource("v1", plural, namespace=meta["namespace"]), body=obj)
            )

    async def _group_admitted(self, job: dict[str, Any]) -> bool:
        path = paths.resource(
            podgroup_io.PG, "podgroups", namespace=job["metadata"]["namespace"], name=names.podgroup(job)
        )
        try:
            group = await self.api.request("GET", path)
        except errors.ApiError as exc:
            if exc.status == 404:
                return False
            raise
        return ((group.get("status") or {}).get("phase") or "Pending") != "Pending"

    async def _finish(self, job: dict[str, Any], now: datetime.datetime) -> None:
        """Give the queue back (delete the PodGroup); delete the job once its TTL has passed."""
        meta = job["metadata"]
        group = paths.resource(podgroup_io.PG, "podgroups", namespace=meta["namespace"], name=names.podgroup(job))
        await _ignore(404, self.api.request("DELETE", group))
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
            asyncio.get_running_loop().call_later(left, self._enqueue, meta["namespace"], meta["name"], None)
