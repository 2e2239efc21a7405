"""The native backend's objects: a ``Workload`` and a ``PodGroup`` (``scheduling.k8s.io/v1beta1``),
or one per stage of a staged group, for every Volcano PodGroup, made by ``bridge.native.workloads`` (pure).

The Volcano PodGroup stays the record of the gang (queue, minResources, ``vbridge list``); this
reconciler follows every Volcano PodGroup and keeps its two native twins:

- ADDED or MODIFIED: each twin is created when missing (same name and namespace, the job's owner
  references, so the garbage collector removes them with the job); an existing one is brought
  to the desired ``schedulingPolicy`` and priority by a JSON Patch diff (``bridge.patching``).
  kube-scheduler lets only ``minCount`` change: a change it refuses (gang to basic, a Workload
  template) is a Warning Event ``NativeGroupNotSynced`` on the Volcano PodGroup.
- a twin the apiserver refuses to create (400, 403, 422: a PriorityClass that does not exist,
  an admission policy) leaves the group without a native PodGroup, so kube-scheduler never
  places its pods: the Volcano PodGroup gets the condition ``keys.NATIVE_SYNCED`` False, reason
  ``Refused``, with the apiserver's message, and one Warning Event ``NativeGroupRefused`` per
  new message (``vbridge explain`` reports it). Once both twins exist the condition goes.
  The same create is not sent again at once: the group's events are ignored for a backoff per
  group (``NATIVE_CREATE_RETRY_FIRST`` seconds, doubled per refusal in a row up to
  ``NATIVE_CREATE_RETRY_MOST``), after which a timer reads the group again and tries once (a
  PriorityClass made since is picked up); a change of the group's ``spec`` tries at once, with
  the backoff starting over. A group deleted, or being deleted, is never tried again.
- DELETED (the job finished and its reconciler released the group, or the job went): both
  twins are deleted. The native PodGroup's own finalizer keeps it until its pods have ended.

The pods were stamped at admission (``bridge.native.pods``); kube-scheduler holds a pod whose
PodGroup is missing and looks again once it appears, and the queue gate holds them all before.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import datetime
import logging
from typing import Any

from bridge import defaults, errors, keys, patching
from bridge.k8s import client, events, paths, watching
from bridge.native import workloads as native_workloads

__all__ = ["REFUSED", "NativeReconciler"]

log = logging.getLogger(__name__)

_PLURALS = {"Workload": "workloads", "PodGroup": "podgroups"}
REFUSED = "Refused"
_REFUSALS = (400, 403, 422)  # what the apiserver answers a create it will not make, whoever asks again


def _path(obj: dict[str, Any], *, named: bool = True) -> str:
    meta = obj["metadata"]
    return paths.resource(
        native_workloads.API,
        _PLURALS[obj["kind"]],
        namespace=meta["namespace"],
        name=meta["name"] if named else None,
    )


def _key(pg: dict[str, Any]) -> str:
    meta = pg["metadata"]
    return f"{meta['namespace']}/{meta['name']}"


@dataclasses.dataclass
class _Refusal:
    """A group whose twin was refused: the spec it was made from, the backoff, its retry."""

    spec: dict[str, Any]
    delay: float  # seconds waited after the last refusal
    until: float  # loop time before which the same spec is not tried again
    timer: asyncio.TimerHandle


class NativeReconciler:
    def __init__(
        self,
        api: client.Client,
        *,
        first: float = defaults.NATIVE_CREATE_RETRY_FIRST,
        most: float = defaults.NATIVE_CREATE_RETRY_MOST,
    ) -> None:
        """``first``, ``most``: the backoff after a refused create (see the module's docstring)."""
        self.api = api
        self.backoff = watching.Backoff(first=first, most=most)
        self._refusals: dict[str, _Refusal] = {}  # group key -> its refused create
        self._locks: dict[str, asyncio.Lock] = {}  # group key -> held by its event or its retry
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        try:
            await watching.follow(self.api, paths.resource(defaults.PODGROUP_API, "podgroups"), self._on_event)
        finally:
            for key in list(self._refusals):
                self._forget(key)
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    def _forget(self, key: str) -> None:
        """No retry for ``key`` (deleted, being deleted, or its twins made)."""
        refusal = self._refusals.pop(key, None)
        if refusal is not None:
            refusal.timer.cancel()

    async def _on_event(self, kind: str, pg: dict[str, Any]) -> None:
        key = _key(pg)
        if kind == "DELETED":
            self._forget(key)
            async with self._lock(key):
                await self.release(pg)
            self._locks.pop(key, None)
        elif (pg.get("metadata") or {}).get("deletionTimestamp"):
            self._forget(key)
        else:
            async with self._lock(key):
                await self.reconcile(pg)

    def _refusal(self, key: str, pg: dict[str, Any]) -> float:
        """Record a refused create of ``pg``'s twin: the seconds before it is tried again."""
        spec = pg.get("spec") or {}
        previous = self._refusals.pop(key, None)
        if previous is not None:
            previous.timer.cancel()
        delay = self.backoff.next(previous.delay if previous is not None and previous.spec == spec else 0.0)
        loop = asyncio.get_running_loop()
        timer = loop.call_later(delay, self._retry_soon, key)
        self._refusals[key] = _Refusal(copy.deepcopy(spec), delay, loop.time() + delay, timer)
        return delay

    def _retry_soon(self, key: str) -> None:
        task = asyncio.create_task(self._retry(key))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _retry(self, key: str) -> None:
        """The backoff of ``key`` has passed: read the group again and reconcile it."""
        async with self._lock(key):
            refusal = self._refusals.get(key)
            if refusal is None:  # deleted, or made, meanwhile
                return
            refusal.until = 0.0
            namespace, _, name = key.partition("/")
            path = paths.resource(defaults.PODGROUP_API, "podgroups", namespace=namespace, name=name)
            try:
                pg = await self.api.request("GET", path)
                if (pg.get("metadata") or {}).get("deletionTimestamp"):
                    self._forget(key)
                    return
                await self.reconcile(pg)
            except errors.ApiError as exc:
                if exc.status == 404:
                    self._forget(key)
                    return
                self._again(key, refusal, exc)
            except client.TRANSPORT_ERRORS as exc:
                self._again(key, refusal, exc)

    def _again(self, key: str, refusal: _Refusal, exc: BaseException) -> None:
        """A retry that failed for another reason: the next one after the same wait."""
        if self._refusals.get(key) is not refusal:  # refused again meanwhile: its own timer stands
            return
        log.warning("native twins of PodGroup %s: %s; trying again in %.0f s", key, exc, refusal.delay)
        refusal.timer = asyncio.get_running_loop().call_later(refusal.delay, self._retry_soon, key)

    async def reconcile(self, pg: dict[str, Any]) -> None:
        """Both twins of ``pg`` exist and match it (the Workload first: the PodGroup refers to it);
        nothing while a refusal of the same spec waits out its backoff."""
        key = _key(pg)
        refusal = self._refusals.get(key)
        waiting = refusal is not None and asyncio.get_running_loop().time() < refusal.until
        if refusal is not None and waiting and refusal.spec == (pg.get("spec") or {}):
            return  # the same create, refused: its timer tries again
        for desired in (native_workloads.workload(pg), *native_workloads.podgroups(pg)):
            try:
                created = await self._create(desired)
            except errors.ApiError as exc:
                if exc.status not in _REFUSALS:
                    raise
                where = f"{desired['kind']} {desired['metadata']['namespace']}/{desired['metadata']['name']}"
                message = f"{where} ({native_workloads.API}) refused: {exc.message or exc.reason}"
                log.warning("%s; trying again in %.0f s or when its spec changes", message, self._refusal(key, pg))
                await self._refused(pg, message)
                return
            if created:
                continue
            try:
                await self._ensure(desired)
            except errors.ApiError as exc:
                if exc.status not in (400, 422):
                    raise
                message = f"{desired['kind']} {desired['metadata']['name']} not brought in line: {exc.message}"
                await events.emit(self.api, pg, reason="NativeGroupNotSynced", message=message, warning=True)
        self._forget(key)
        await self._refused(pg, None)

    async def _refused(self, pg: dict[str, Any], message: str | None) -> None:
        """The condition ``keys.NATIVE_SYNCED`` on ``pg``: False with ``message``, or gone (None).
        Written only when it changes (an Event with it); a conflict is left to the next event."""
        conditions = list((pg.get("status") or {}).get("conditions") or [])
        current = next((c for c in conditions if c.get("type") == keys.NATIVE_SYNCED), None)
        if (current or {}).get("message") == message or (current is None and message is None):
            return
        others = [c for c in conditions if c.get("type") != keys.NATIVE_SYNCED]
        if message is not None:
            now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            condition = {"type": keys.NATIVE_SYNCED, "status": "False", "reason": REFUSED, "message": message}
            others.append({**condition, "lastTransitionTime": now})
        meta = pg["metadata"]
        body = {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "status": {"conditions": others}}
        path = paths.resource(defaults.PODGROUP_API, "podgroups", namespace=meta["namespace"], name=meta["name"])
        try:
            await self.api.request("PATCH", path, body=body, content_type=client.MERGE)
        except errors.ApiError as exc:
            if exc.status not in (404, 409):  # gone, or changed since: its next event brings us back
                raise
            return
        if message is not None:
            await events.emit(self.api, pg, reason="NativeGroupRefused", message=message, warning=True)

    async def _create(self, desired: dict[str, Any]) -> bool:
        """POST ``desired``: whether it was created (False: it exists)."""
        try:
            await self.api.request("POST", _path(desired, named=False), body=desired)
        except errors.ApiError as exc:
            if exc.status != 409:
                raise
            return False
        return True

    async def _ensure(self, desired: dict[str, Any]) -> None:
        """An existing twin brought to ``desired``'s spec and owners."""
        current = await self.api.request("GET", _path(desired))
        # Only the fields we write are set: the apiserver defaults others and kube-scheduler
        # writes status. Owner references someone else put there are never stripped.
        wanted = patching.assoc(current, ("spec",), {**(current.get("spec") or {}), **desired["spec"]})
        owners = desired["metadata"].get("ownerReferences")
        if owners:
            wanted = patching.assoc(wanted, ("metadata", "ownerReferences"), owners)
        ops = patching.diff(current, wanted)
        if ops:
            await self.api.request("PATCH", _path(desired), body=ops, content_type=client.JSON_PATCH)

    async def release(self, pg: dict[str, Any]) -> None:
        """Delete both twins of a Volcano PodGroup that is gone (absent ones are fine)."""
        for twin in (*native_workloads.podgroups(pg), native_workloads.workload(pg)):
            try:
                await self.api.request("DELETE", _path(twin))
            except errors.ApiError as exc:
                if exc.status != 404:
                    raise
