"""Write a plan's verdicts: PodGroup and Queue status, pod conditions, Events. Only changes.

Each object's last written value is kept; a verdict equal to it, or to what the watch already
shows, costs no request, so a steady state writes nothing. Writes carry the cached
``resourceVersion`` as a precondition: if another leader (or anyone) changed the object since
we saw it, the apiserver answers 409, nothing is recorded, and the next cycle decides again
from fresh data (leader election does not fence, so overlapping leaders must not clobber).

PodGroup has no status subresource (as in Volcano), so its ``status`` is merge-patched on the
object; Queue status goes through ``queues/{name}/status``; pod conditions through
``pods/{name}/status`` (strategic merge on the ``type`` key).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Callable, Collection, Mapping
from typing import Any

from bridge import defaults, errors, keys
from bridge.k8s import client, events, paths
from scheduler.api import plan
from scheduler.io import cache as cache_mod

__all__ = ["StatusWriter", "event", "pod_condition", "podgroup_status", "queue_status"]

log = logging.getLogger(__name__)

PG_API = defaults.PODGROUP_API
Obj = dict[str, Any]


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _split(key: str) -> tuple[str, str]:
    namespace, _, name = key.partition("/")
    return namespace, name


async def event(api: client.Client, obj: Obj, *, reason: str, message: str, warning: bool = False) -> None:
    """An Event on a pod (or another object); list items carry no kind, so pods are assumed."""
    full = {"apiVersion": obj.get("apiVersion", "v1"), "kind": obj.get("kind", "Pod"), "metadata": obj["metadata"]}
    await events.emit(api, full, reason=reason, message=message, warning=warning)


async def pod_condition(api: client.Client, pod: Obj, *, reason: str, message: str) -> bool:
    """PodScheduled=False with ``reason``/``message``; False when the precondition failed."""
    meta = pod.get("metadata") or {}
    condition = {
        "type": "PodScheduled",
        "status": "False",
        "reason": reason,
        "message": message,
        "lastTransitionTime": _now(),
    }
    body = {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "status": {"conditions": [condition]}}
    path = paths.resource("v1", "pods", namespace=meta.get("namespace"), name=meta.get("name"), subresource="status")
    try:
        await api.request("PATCH", path, body=body, content_type=client.STRATEGIC)
    except errors.ApiError as exc:
        if exc.status not in (404, 409):
            log.warning("could not set PodScheduled on %s: %s", meta.get("name"), exc)
        return False
    except client.TRANSPORT_ERRORS as exc:  # a dropped or refused connection: told again next cycle
        log.warning("could not set PodScheduled on %s: %r", meta.get("name"), exc)
        return False
    return True


def _conditions_key(conditions: Any) -> tuple[tuple[str, str, str, str], ...]:
    return tuple(
        (str(c.get("type")), str(c.get("status")), str(c.get("reason", "")), str(c.get("message", "")))
        for c in conditions or []
    )


def podgroup_status(verdict: plan.PodGroupVerdict, live: Mapping[str, Any], now: str) -> Obj:
    """The status to write; a condition that did not flip keeps its lastTransitionTime. The
    native reconciler's condition (``keys.NATIVE_SYNCED``) is not ours: it is kept as it is."""
    before = {(c.get("type"), c.get("status")): c.get("lastTransitionTime") for c in live.get("conditions") or []}
    return {
        "phase": verdict.phase,
        "conditions": [
            *(
                {
                    "type": c.type,
                    "status": c.status,
                    "reason": c.reason,
                    "message": c.message,
                    "lastTransitionTime": before.get((c.type, c.status)) or now,
                }
                for c in verdict.conditions
            ),
            *(c for c in live.get("conditions") or [] if c.get("type") == keys.NATIVE_SYNCED),
        ],
        "running": verdict.running,
        "succeeded": verdict.succeeded,
        "failed": verdict.failed,
    }


def _pg_key(status: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        status.get("phase") or "Pending",
        _conditions_key(status.get("conditions")),
        int(status.get("running") or 0),
        int(status.get("succeeded") or 0),
        int(status.get("failed") or 0),
    )


def queue_status(verdict: plan.QueueVerdict, live: Mapping[str, Any]) -> Obj:
    """Counts and allocation; resources the queue no longer holds are removed (null in a merge patch).

    The state is the controller's and vcctl's (open, close): ours only where the queue has none
    yet, and the step from Closing to Closed once drained. Any other verdict state was decided
    from a snapshot that may predate an open or close, so the live state is kept."""
    allocated: dict[str, str | None] = {name: None for name in live.get("allocated") or {}}
    allocated.update(verdict.allocated)
    current = live.get("state")
    drained = current == "Closing" and verdict.state == "Closed"
    return {
        "state": verdict.state if not current or drained else current,
        "pending": verdict.pending,
        "inqueue": verdict.inqueue,
        "running": verdict.running,
        "unknown": verdict.unknown,
        "completed": verdict.completed,
        "allocated": allocated,
    }


def _queue_key(status: Mapping[str, Any]) -> tuple[Any, ...]:
    allocated = {k: str(v) for k, v in (status.get("allocated") or {}).items() if v is not None}
    counts = tuple(int(status.get(k) or 0) for k in ("pending", "inqueue", "running", "unknown", "completed"))
    return (status.get("state") or "", counts, tuple(sorted(allocated.items())))


class StatusWriter:
    def __init__(
        self, api: client.Client, cache: cache_mod.Cache, *, concurrency: int = 32, clock: Callable[[], str] = _now
    ) -> None:
        self.api = api
        self.cache = cache
        self.clock = clock
        self.writes = 0  # requests made, for metrics and tests
        self._gate = asyncio.Semaphore(concurrency)
        self._last: dict[str, tuple[Any, ...]] = {}

    async def write(self, verdicts: plan.Plan, *, bound: Collection[str] = ()) -> int:
        """Write what changed; ``bound`` are the pods whose binds succeeded (for Scheduled events)."""
        before = self.writes
        jobs = [self._podgroup(v) for v in verdicts.podgroups]
        jobs += [self._queue(v) for v in verdicts.queues]
        bound_set = set(bound)
        jobs += [self._pod(v) for v in verdicts.pods if v.reason != "Scheduled" or v.pod in bound_set]
        await asyncio.gather(*jobs)
        self._prune()
        return self.writes - before

    async def _send(self, method: str, path: str, body: Obj, content_type: str) -> bool:
        async with self._gate:
            self.writes += 1
            try:
                await self.api.request(method, path, body=body, content_type=content_type)
            except errors.ApiError as exc:
                if exc.status not in (404, 409):
                    log.warning("%s %s failed: %s", method, path, exc)
                return False
            except client.TRANSPORT_ERRORS as exc:  # a dropped or timed-out connection: written next cycle
                log.warning("%s %s failed: %s", method, path, exc or type(exc).__name__)
                return False
        return True

    def _unchanged(self, slot: str, want: tuple[Any, ...], live: tuple[Any, ...], version: Any) -> bool:
        """Whether nothing need be written: the object already shows ``want``, or it is still at
        ``version``, the one our own write of ``want`` replaced (the watch has not caught up).
        Any other version is someone else's write: compared on what it shows, never on what we
        wrote before (another writer's rewrite of a status we own is written back)."""
        if live == want:  # already so (e.g. after a restart): remember, write nothing
            self._last[slot] = (want, version)
            return True
        return self._last.get(slot) == (want, version)

    async def _podgroup(self, verdict: plan.PodGroupVerdict) -> None:
        obj = self.cache.store["podgroups"].get(verdict.key)
        if obj is None:
            return
        live = obj.get("status") or {}
        status = podgroup_status(verdict, live, self.clock())
        want = _pg_key(status)
        version = obj["metadata"].get("resourceVersion")
        if self._unchanged(f"pg:{verdict.key}", want, _pg_key(live), version):
            return
        namespace, name = _split(verdict.key)
        body = {"metadata": {"resourceVersion": version}, "status": status}
        path = paths.resource(PG_API, "podgroups", namespace=namespace, name=name)
        if await self._send("PATCH", path, body, client.MERGE):
            self._last[f"pg:{verdict.key}"] = (want, version)
            unschedulable = next((c for c in verdict.conditions if c.type == "Unschedulable"), None)
            old = next((c for c in _conditions_key(live.get("conditions")) if c[0] == "Unschedulable"), None)
            if unschedulable is not None and (old is None or old[3] != unschedulable.message):
                full = {"apiVersion": PG_API, "kind": "PodGroup", "metadata": obj["metadata"]}
                self.writes += 1
                await event(self.api, full, reason="Unschedulable", message=unschedulable.message, warning=True)

    async def _queue(self, verdict: plan.QueueVerdict) -> None:
        obj = self.cache.store["queues"].get(verdict.name)
        if obj is None:
            return
        live = obj.get("status") or {}
        status = queue_status(verdict, live)
        if live.get("state") == "Closing" and status["state"] == "Closed" and not await self._drained(verdict.name):
            status["state"] = "Closing"  # our cache has not seen every PodGroup the closing write counted
        want = _queue_key(status)
        version = obj["metadata"].get("resourceVersion")
        if self._unchanged(f"q:{verdict.name}", want, _queue_key(live), version):
            return
        body = {"metadata": {"resourceVersion": version}, "status": status}
        path = paths.resource(PG_API, "queues", name=verdict.name, subresource="status")
        if await self._send("PATCH", path, body, client.MERGE):
            self._last[f"q:{verdict.name}"] = (want, version)

    async def _drained(self, queue: str) -> bool:
        """Whether the apiserver holds no PodGroup of ``queue``: asked once, when our cache would
        make a Closing queue Closed (the watch of PodGroups may lag the one of Queues)."""
        async with self._gate:
            try:
                listed = await self.api.request("GET", paths.resource(PG_API, "podgroups"))
            except errors.ApiError as exc:
                log.warning("listing PodGroups of closing queue %s failed: %s", queue, exc)
                return False
            except client.TRANSPORT_ERRORS as exc:
                log.warning("listing PodGroups of closing queue %s failed: %s", queue, exc or type(exc).__name__)
                return False
        return not any((g.get("spec") or {}).get("queue") == queue for g in listed.get("items") or [])

    async def _pod(self, verdict: plan.PodVerdict) -> None:
        pod = self.cache.pod(verdict.pod)
        if pod is None:
            return
        uid = pod["metadata"].get("uid", "")
        want_event = (uid, verdict.reason, verdict.message)
        if self._last.get(f"ev:{verdict.pod}") != want_event:
            self._last[f"ev:{verdict.pod}"] = want_event
            async with self._gate:
                self.writes += 1
                await event(
                    self.api,
                    pod,
                    reason=verdict.reason,
                    message=verdict.message,
                    warning=verdict.event_type != "Normal",
                )
        condition = verdict.condition
        if condition is None or (pod.get("spec") or {}).get("nodeName"):
            return
        want = (uid, condition.type, condition.status, condition.reason, condition.message)
        live = next(
            (
                (uid, c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
                for c in (pod.get("status") or {}).get("conditions") or []
                if c.get("type") == "PodScheduled"
            ),
            (),
        )
        version = pod["metadata"].get("resourceVersion")
        if self._unchanged(f"pod:{verdict.pod}", want, live, version):
            return
        async with self._gate:
            self.writes += 1
            if await pod_condition(self.api, pod, reason=condition.reason, message=condition.message):
                self._last[f"pod:{verdict.pod}"] = (want, version)

    def _prune(self) -> None:
        """Forget objects that no longer exist, so memory follows the cluster."""
        stores = {"pg": "podgroups", "q": "queues", "ev": "pods", "pod": "pods"}
        for slot in list(self._last):
            prefix, _, key = slot.partition(":")
            if key not in self.cache.store[stores[prefix]]:
                del self._last[slot]
