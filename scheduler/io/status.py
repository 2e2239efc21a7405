"""Write a plan's verdicts: PodGroup and Queue status, pod conditions, Events. Only changes, off the cycle's path.

``StatusWriter.submit(plan)`` (no I/O, called at the end of a cycle) works out what changed and
queues it; ``run()``, a task of the scheduler's own, writes the queue out. So a cycle never
waits for a status write (issue 31: 4,132 writes on one cycle's path made it ten minutes long):

- the queue (``pacing.Coalescing``) holds one entry per object and kind of write (``slot``): a
  verdict for an object still queued replaces it (the latest wins, its place kept), so 10,000
  pending pods are at most 10,000 pod entries, whatever the number of cycles;
- writes go out at ``qps``/``burst`` (``pacing.Bucket``; ``defaults.STATUS_QPS``, ``STATUS_BURST``)
  and ``in_flight`` at once; PodGroup and Queue status (tier 0) before pod conditions and Events
  (tier 1): what users read first;
- each object's last written value is kept; a verdict equal to it, or to what the watch already
  shows, costs no request, so a steady state writes nothing;
- a pending pod's ``PodScheduled=False`` condition and its Event are compared on their reason
  (``PodVerdict.reason`` and ``cause``, the group's condition reason) and the pod's uid, not the
  message: one write per change of reason, not one per cycle because a count in the message
  moved. The PodGroup's Unschedulable condition and Event keep the message (one per gang);
- a failed bind (``bind_failed``, from ``binder``) queues its ``FailedScheduling`` Event (a slot of
  its own) and ``PodScheduled=False`` reason ``SchedulerError`` (the pod's condition slot).

Writes carry the ``resourceVersion`` cached when the verdict was made as a precondition: if
another leader (or anyone) changed the object since we saw it, the apiserver answers 409, the
write is dropped, nothing is recorded, and the next verdict decides again from fresh data
(leader election does not fence, so overlapping leaders must not clobber).

PodGroup has no status subresource (as in Volcano), so its ``status`` is merge-patched on the
object; Queue status goes through ``queues/{name}/status``; pod conditions through
``pods/{name}/status`` (strategic merge on the ``type`` key).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging
from collections.abc import Callable, Collection
from typing import Any

from bridge import defaults, errors
from bridge.k8s import client, events, paths
from scheduler.api import plan
from scheduler.io import bodies, pacing
from scheduler.io import cache as sched_cache

__all__ = ["Counts", "Obj", "StatusWriter", "Write", "event", "pod_condition"]

log = logging.getLogger(__name__)

_PG_API = defaults.PODGROUP_API
Obj = dict[str, Any]


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def event(api: client.Client, obj: Obj, *, reason: str, message: str, warning: bool = False) -> None:
    """An Event on a pod (or another object); list items carry no kind, so pods are assumed."""
    full = {"apiVersion": obj.get("apiVersion", "v1"), "kind": obj.get("kind", "Pod"), "metadata": obj["metadata"]}
    await events.emit(api, full, reason=reason, message=message, warning=warning)


async def pod_condition(api: client.Client, pod: Obj, *, reason: str, message: str) -> bool:
    """PodScheduled=False with ``reason``/``message``; False when the precondition failed."""
    meta = pod.get("metadata") or {}
    condition = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
    condition["lastTransitionTime"] = _now()
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


_PG, _QUEUE, _POD, _EVENT, _BIND = "pg", "q", "pod", "ev", "bind"
_STORES = {_PG: "podgroups", _QUEUE: "queues", _POD: "pods", _EVENT: "pods", _BIND: "pods"}
_TIERS = {_PG: 0, _QUEUE: 0, _POD: 1, _EVENT: 1, _BIND: 1}  # what users read first goes first


@dataclasses.dataclass(frozen=True, slots=True)
class Write:
    """One queued write: what it makes the object show (``want``), against the object as the
    verdict saw it (``obj``: its resourceVersion is the precondition), and what is sent."""

    want: tuple[Any, ...]
    obj: Obj
    body: Obj
    event: tuple[str, str, bool] | None = None  # (reason, message, warning) of an Event to emit


@dataclasses.dataclass(slots=True)
class Counts:
    """What the writer did, for metrics and tests."""

    requests: int = 0  # requests made (status, conditions, Events)
    queued: int = 0  # writes queued
    coalesced: int = 0  # ... that replaced one still queued for the same object
    dropped: int = 0  # refused (404, 409), failed, or out of date by the time their turn came


class StatusWriter:
    def __init__(
        self,
        api: client.Client,
        cache: sched_cache.Cache,
        *,
        qps: float = defaults.STATUS_QPS,
        burst: int = defaults.STATUS_BURST,
        in_flight: int = defaults.STATUS_IN_FLIGHT,
        clock: Callable[[], str] = _now,
    ) -> None:
        self.api = api
        self.cache = cache
        self.clock = clock
        self.counts = Counts()
        self.queue: pacing.Coalescing[Write] = pacing.Coalescing(2)
        self.bucket = pacing.Bucket(qps, burst)
        self._gate = asyncio.Semaphore(in_flight)
        self._last: dict[str, tuple[Any, ...]] = {}
        self._sending: set[asyncio.Task[None]] = set()
        self._queued = asyncio.Event()  # set while the queue may hold something

    # -- the cycle's side: no I/O ------------------------------------------------------------

    def submit(self, verdicts: plan.Plan, *, bound: Collection[str] = ()) -> int:
        """Queue what changed; how many writes that queued or replaced. ``bound`` are the pods
        whose binds succeeded (only those get a Scheduled event)."""
        before = self.counts.queued
        for group in verdicts.podgroups:
            self._podgroup(group)
        for queue in verdicts.queues:
            self._queue(queue)
        bound_set = set(bound)
        for verdict in verdicts.pods:
            if verdict.reason != "Scheduled" or verdict.pod in bound_set:
                self._pod(verdict)
        self._prune()
        return self.counts.queued - before

    def _put(self, kind: str, key: str, write: Write | None) -> None:
        slot = f"{kind}:{key}"
        if write is None:  # nothing to write (any more): a queued value is out of date
            self.queue.discard(slot)
            return
        queued = self.queue.get(slot)
        if queued is not None and queued.want == write.want and queued.event == write.event:
            return  # the same write is already queued
        self.counts.queued += 1
        if self.queue.put(_TIERS[kind], slot, write):
            self.counts.coalesced += 1
        self._queued.set()

    def _unchanged(self, slot: str, want: tuple[Any, ...], live: tuple[Any, ...], version: Any) -> bool:
        """Whether nothing need be written: the object already shows ``want``, or it is still at
        ``version``, the one our own write of ``want`` replaced (the watch has not caught up).
        Any other version is someone else's write: compared on what it shows, never on what we
        wrote before (another writer's rewrite of a status we own is written back)."""
        if live == want:  # already so (e.g. after a restart): remember, write nothing
            self._last[slot] = (want, version)
            return True
        return self._last.get(slot) == (want, version)

    def _podgroup(self, verdict: plan.PodGroupVerdict) -> None:
        obj = self.cache.store["podgroups"].get(verdict.key)
        if obj is None:
            return
        live = obj.get("status") or {}
        self.cache.decide(verdict.key, obj["metadata"].get("resourceVersion"), verdict.phase)
        status = bodies.podgroup_status(verdict, live, self.clock())
        want = bodies.pg_key(status)
        if self._unchanged(f"{_PG}:{verdict.key}", want, bodies.pg_key(live), obj["metadata"].get("resourceVersion")):
            self._put(_PG, verdict.key, None)
            return
        unschedulable = next((c for c in verdict.conditions if c.type == "Unschedulable"), None)
        old = next((c for c in bodies.conditions_key(live.get("conditions")) if c[0] == "Unschedulable"), None)
        event = None
        if unschedulable is not None and (old is None or old[3] != unschedulable.message):
            event = ("Unschedulable", unschedulable.message, True)
        self._put(_PG, verdict.key, Write(want, obj, status, event))

    def _queue(self, verdict: plan.QueueVerdict) -> None:
        obj = self.cache.store["queues"].get(verdict.name)
        if obj is None:
            return
        live = obj.get("status") or {}
        status = bodies.queue_status(verdict, live)
        want = bodies.queue_key(status)
        if self._unchanged(
            f"{_QUEUE}:{verdict.name}", want, bodies.queue_key(live), obj["metadata"].get("resourceVersion")
        ):
            self._put(_QUEUE, verdict.name, None)
            return
        self._put(_QUEUE, verdict.name, Write(want, obj, status))

    def _pod(self, verdict: plan.PodVerdict) -> None:
        pod = self.cache.pod(verdict.pod)
        if pod is None:
            return
        uid = pod["metadata"].get("uid", "")
        # One Event per reason and cause: a message that changes every cycle (a count in it) is not
        # news. Told once queued: a failed Event is not retried (best effort).
        told = (uid, verdict.reason, verdict.cause)
        if self._last.get(f"{_EVENT}:{verdict.pod}") != told:
            self._last[f"{_EVENT}:{verdict.pod}"] = told
            event = (verdict.reason, verdict.message, verdict.event_type != "Normal")
            self._put(_EVENT, verdict.pod, Write(told, pod, {}, event))
        condition = verdict.condition
        if condition is None or (pod.get("spec") or {}).get("nodeName"):
            self._put(_POD, verdict.pod, None)  # bound: a PodScheduled=False still queued is wrong now
            return
        want = (uid, condition.type, condition.status, condition.reason, verdict.cause)
        live = next(
            (
                (uid, c.get("type"), c.get("status"), c.get("reason"))
                for c in (pod.get("status") or {}).get("conditions") or []
                if c.get("type") == "PodScheduled"
            ),
            (),
        )
        version, slot = pod["metadata"].get("resourceVersion"), f"{_POD}:{verdict.pod}"
        last = self._last.get(slot)
        # The pod shows the reason, not the cause: it is so already when it shows the reason and
        # the cause is the one we wrote (or we wrote none: after a restart, not written again).
        if live == want[:4] and (last is None or last[0] == want):
            self._last[slot] = (want, version)
            self._put(_POD, verdict.pod, None)
            return
        if last == (want, version):  # our write, not seen back yet
            self._put(_POD, verdict.pod, None)
            return
        self._put(_POD, verdict.pod, Write(want, pod, {"reason": condition.reason, "message": condition.message}))

    def bind_failed(self, key: str, pod: Obj, message: str, *, condition: bool) -> None:
        """A failed bind of ``pod`` (``key``): its Event and, with ``condition``, PodScheduled=False."""
        uid = pod["metadata"].get("uid", "")
        self._put(_BIND, key, Write((uid, message), pod, {}, ("FailedScheduling", message, True)))
        if condition:
            want = (uid, "PodScheduled", "False", "SchedulerError", message)
            self._put(_POD, key, Write(want, pod, {"reason": "SchedulerError", "message": message}))

    def _prune(self) -> None:
        """Forget objects that no longer exist, so memory follows the cluster."""
        for slot in list(self._last):
            kind, _, key = slot.partition(":")
            if key not in self.cache.store[_STORES[kind]]:
                del self._last[slot]

    # -- the writer's side ------------------------------------------------------------------

    async def run(self) -> None:
        """Write the queue out as it fills, until cancelled."""
        try:
            await self._drain(forever=True)
        finally:
            for task in self._sending:
                task.cancel()

    async def flush(self) -> None:
        """Write out everything queued now (paced as ``run`` does), and wait for it."""
        await self._drain(forever=False)
        while self._sending:
            await asyncio.wait(set(self._sending))

    def clear(self) -> None:
        """Drop everything queued (the Lease was lost: the new leader decides and writes)."""
        while self.queue.pop() is not None:
            self.counts.dropped += 1

    async def write(self, verdicts: plan.Plan, *, bound: Collection[str] = ()) -> int:
        """``submit`` then ``flush``: how many requests that made (tools and tests)."""
        before = self.counts.requests
        self.submit(verdicts, bound=bound)
        await self.flush()
        return self.counts.requests - before

    async def _drain(self, *, forever: bool) -> None:
        while True:
            if not self.queue:
                if not forever:
                    return
                self._queued.clear()
                await self._queued.wait()
                continue
            await self._gate.acquire()
            # Taken from the queue only once a request may go: until then a newer verdict for
            # the same object still replaces it.
            await self.bucket.acquire()
            entry = self.queue.pop()
            if entry is None:
                self._gate.release()
                continue
            task = asyncio.create_task(self._one(*entry))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _one(self, slot: str, write: Write) -> None:
        try:
            kind, _, key = slot.partition(":")
            sent = await {
                _PG: self._send_podgroup,
                _QUEUE: self._send_queue,
                _POD: self._send_pod,
                _EVENT: self._send_event,
                _BIND: self._send_event,
            }[kind](slot, key, write)
            if not sent:
                self.counts.dropped += 1
        except Exception:  # a bug on one odd object must not end the writer
            log.exception("status write %s failed unexpectedly", slot)
            self.counts.dropped += 1
        finally:
            self._gate.release()

    async def _send(self, method: str, path: str, body: Obj, content_type: str) -> bool:
        self.counts.requests += 1
        try:
            await self.api.request(method, path, body=body, content_type=content_type)
        except errors.ApiError as exc:
            if exc.status not in (404, 409):
                log.warning("%s %s failed: %s", method, path, exc)
            return False
        except client.TRANSPORT_ERRORS as exc:  # a dropped or timed-out connection: the next verdict decides
            log.warning("%s %s failed: %s", method, path, exc or type(exc).__name__)
            return False
        return True

    async def _send_podgroup(self, slot: str, key: str, write: Write) -> bool:
        version = write.obj["metadata"].get("resourceVersion")
        namespace, _, name = key.partition("/")
        body = {"metadata": {"resourceVersion": version}, "status": write.body}
        path = paths.resource(_PG_API, "podgroups", namespace=namespace, name=name)
        if not await self._send("PATCH", path, body, client.MERGE):
            return False
        self._last[slot] = (write.want, version)
        if write.event is not None:
            reason, message, warning = write.event
            full = {"apiVersion": _PG_API, "kind": "PodGroup", "metadata": write.obj["metadata"]}
            await self.bucket.acquire()
            self.counts.requests += 1
            await event(self.api, full, reason=reason, message=message, warning=warning)
        return True

    async def _send_queue(self, slot: str, key: str, write: Write) -> bool:
        status, want = write.body, write.want
        live = write.obj.get("status") or {}
        if live.get("state") == "Closing" and status["state"] == "Closed" and not await self._drained(key):
            status = {**status, "state": "Closing"}  # our cache has not seen every PodGroup the closing write counted
            want = bodies.queue_key(status)
            if want == bodies.queue_key(live):
                return True
        version = write.obj["metadata"].get("resourceVersion")
        body = {"metadata": {"resourceVersion": version}, "status": status}
        if not await self._send(
            "PATCH", paths.resource(_PG_API, "queues", name=key, subresource="status"), body, client.MERGE
        ):
            return False
        self._last[slot] = (want, version)
        return True

    async def _drained(self, queue: str) -> bool:
        """Whether the apiserver holds no PodGroup of ``queue``: asked once, when our cache would
        make a Closing queue Closed (the watch of PodGroups may lag the one of Queues)."""
        try:
            listed = await self.api.request("GET", paths.resource(_PG_API, "podgroups"))
        except errors.ApiError as exc:
            log.warning("listing PodGroups of closing queue %s failed: %s", queue, exc)
            return False
        except client.TRANSPORT_ERRORS as exc:
            log.warning("listing PodGroups of closing queue %s failed: %s", queue, exc or type(exc).__name__)
            return False
        return not any((g.get("spec") or {}).get("queue") == queue for g in listed.get("items") or [])

    async def _send_pod(self, slot: str, key: str, write: Write) -> bool:
        now = self.cache.pod(key)
        if now is None or now["metadata"].get("uid") != write.want[0] or (now.get("spec") or {}).get("nodeName"):
            return False  # gone, replaced or bound since: nothing to say any more
        self.counts.requests += 1
        if not await pod_condition(self.api, write.obj, reason=write.body["reason"], message=write.body["message"]):
            return False
        self._last[slot] = (write.want, write.obj["metadata"].get("resourceVersion"))
        return True

    async def _send_event(self, slot: str, key: str, write: Write) -> bool:
        now = self.cache.pod(key)
        if now is None or now["metadata"].get("uid") != write.want[0]:
            return False
        assert write.event is not None
        reason, message, warning = write.event
        self.counts.requests += 1
        await event(self.api, write.obj, reason=reason, message=message, warning=warning)
        return True
