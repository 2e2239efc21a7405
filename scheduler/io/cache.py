"""What the apiserver holds, as the watches report it, plus what we did but have not seen yet.

One watch per kind (list, then watch; ``bridge.k8s.watching`` relists on 410 without replay);
pods and nodes are decoded only as far as the scheduler reads them (``reads``).
``inputs()`` returns the API-dict lists ``building.build`` takes, with two overlays:

- *assumed* pods (kube-scheduler's assume): bound by us, not yet seen bound. They are shown
  with ``spec.nodeName`` set so the next cycle neither places them twice nor reuses their room.
  They never expire while the bind is in flight (kube-scheduler #106361: expiry raced slow
  binds); they are dropped when the watch shows the pod bound or gone, or when the binder
  forgets a failed bind.
- *deleting* pods: victims we deleted, shown with a ``deletionTimestamp`` until the watch says
  so, so their room counts as releasing rather than free or still held.
- *decided* PodGroup phases (``decide``): the phase the last verdict gave a group, shown until
  the watch brings any newer version of it. Status is written off the cycle's path, so the next
  cycle may start before the write lands; without this it would decide again from the phase
  before (a gang the native reclaim sent back to Pending would read as still admitted).

Unbound pods with ``spec.schedulingGates`` are left out: the apiserver refuses to bind them (409
"non-empty .spec.schedulingGates"), and kube-scheduler likewise keeps them out of its queue until
the last gate is lifted (the bridge gates spark-submit drivers until their group is complete).
Gates the cycle itself lifts (``lifted``: the native backend's ``keys.QUEUE_GATE``) do not hide
a pod: it is shown, gated, so the cycle can admit its group and ungate it; a pod with any other
gate as well stays out.

What wakes the loop, and what unparks a gang (``parking``): each event is sorted as it is
stored. ``generation`` counts the cluster events that could free room or change what a parked
gang could use: a node added, removed or changed in what the scheduler reads (not a heartbeat),
a pod deleted, being deleted or finished, a Queue's spec or state changed, a PodGroup's spec
changed or the PodGroup removed, any PriorityClass change. ``take_grown()`` hands over the
groups that got a new schedulable pod. Status-only changes (the scheduler's own writes of pod
conditions, PodGroup and Queue status coming back through the watch, a bound pod's status)
change no decision: they wake nothing, so our writes never wake the loop that wrote them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from bridge import defaults, keys
from bridge.k8s import client, paths, views, watching
from scheduler.io import reads

__all__ = ["CHANGED", "FREED", "KINDS", "QUIET", "VIEWS", "Assumed", "Cache", "Obj", "key_of"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

# kind -> (apiVersion, plural); the names are building.build's keyword arguments.
KINDS: dict[str, tuple[str, str]] = {
    "nodes": ("v1", "nodes"),
    "pods": ("v1", "pods"),
    "podgroups": (defaults.PODGROUP_API, "podgroups"),
    "queues": (defaults.QUEUE_API, "queues"),
    "priorityclasses": ("scheduling.k8s.io/v1", "priorityclasses"),
}
# Kinds held only as far as the scheduler reads them (``reads``); the rest are held whole.
VIEWS: dict[str, views.View] = {"nodes": reads.NODES, "pods": reads.PODS}


def key_of(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    return f"{namespace}/{meta.get('name', '')}" if namespace else str(meta.get("name", ""))


@dataclasses.dataclass(frozen=True, slots=True)
class Assumed:
    uid: str
    node: str


class Cache:
    """``await cache.run()`` until cancelled; ``cache.synced`` is set once every kind was listed."""

    def __init__(
        self,
        api: client.Client,
        *,
        on_change: Callable[[], None] | None = None,
        lifted: frozenset[str] = frozenset(),
    ) -> None:
        self.api = api
        self.lifted = lifted
        self.on_change = on_change or (lambda: None)
        self.store: dict[str, dict[str, Obj]] = {kind: {} for kind in KINDS}
        self.synced = asyncio.Event()
        self._synced_kinds: set[str] = set()
        self._assumed: dict[str, Assumed] = {}
        self._deleting: dict[str, str] = {}  # pod key -> uid
        # podgroup key -> the phase decided for the version the store holds (dropped on any event)
        self._decided: dict[str, str] = {}
        self._gated: set[str] = set()  # unbound pods with scheduling gates: not schedulable yet
        self.generation = 0  # cluster events that could let a parked gang through (see the docstring)
        self._grown: set[str] = set()  # groups ("namespace/name") with a new schedulable pod

    # -- the binder's side -----------------------------------------------------------------

    def assume(self, pod: str, uid: str, node: str) -> None:
        self._assumed[pod] = Assumed(uid, node)

    def forget(self, pod: str) -> None:
        self._assumed.pop(pod, None)

    def deleting(self, pod: str, uid: str) -> None:
        self._deleting[pod] = uid

    def decide(self, group: str, version: Any, phase: str) -> None:
        """The status writer's side: ``group``, seen at ``version``, was given ``phase``. Kept only
        while the store still holds that version and shows another phase, so a steady state (or a
        watch already past it) overlays nothing."""
        obj = self.store["podgroups"].get(group)
        if (
            obj is None
            or obj["metadata"].get("resourceVersion") != version
            or ((obj.get("status") or {}).get("phase") or "Pending") == phase
        ):
            self._decided.pop(group, None)
        else:
            self._decided[group] = phase

    def assumed(self) -> dict[str, str]:
        return {pod: a.node for pod, a in self._assumed.items()}

    def pod(self, key: str) -> Obj | None:
        return self.store["pods"].get(key)

    # -- the cycle's side -------------------------------------------------------------------

    def take_grown(self) -> set[str]:
        """The groups that got a new schedulable pod since the last call."""
        grown, self._grown = self._grown, set()
        return grown

    def inputs(self) -> dict[str, list[Obj]]:
        """Shallow copies of the lists; objects are replaced, never mutated, so this is consistent."""
        out = {kind: list(objs.values()) for kind, objs in self.store.items()}
        if self._gated:
            out["pods"] = [p for p in out["pods"] if key_of(p) not in self._gated]
        if self._assumed or self._deleting:
            out["pods"] = [self._overlay(p) for p in out["pods"]]
        if self._decided:
            out["podgroups"] = [self._phase(g) for g in out["podgroups"]]
        return out

    def _phase(self, group: Obj) -> Obj:
        phase = self._decided.get(key_of(group))
        if phase is None:
            return group
        return {**group, "status": {**(group.get("status") or {}), "phase": phase}}

    def _overlay(self, pod: Obj) -> Obj:
        key = key_of(pod)
        uid = (pod.get("metadata") or {}).get("uid")
        assumed = self._assumed.get(key)
        if assumed is not None and assumed.uid == uid and not (pod.get("spec") or {}).get("nodeName"):
            pod = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": assumed.node}}
        if self._deleting.get(key) == uid and not pod["metadata"].get("deletionTimestamp"):
            pod = {**pod, "metadata": {**pod["metadata"], "deletionTimestamp": "1970-01-01T00:00:00Z"}}
        return pod

    # -- the watches' side ------------------------------------------------------------------

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            for kind in KINDS:
                group.create_task(self._follow(kind))

    async def _follow(self, kind: str) -> None:
        """Follow one kind forever (a relist after an error reports what vanished as DELETED)."""
        api_version, plural = KINDS[kind]

        def handle(event: str, obj: Obj) -> None:
            if self._apply(kind, event, obj):
                self.on_change()

        def synced() -> None:
            self._synced_kinds.add(kind)
            if self._synced_kinds == set(KINDS):
                self.synced.set()
            self.on_change()

        path = paths.resource(api_version, plural)
        await watching.follow(self.api, path, handle, on_synced=synced, view=VIEWS.get(kind))

    def _apply(self, kind: str, event: str, obj: Obj) -> bool:
        """Store one event; True when the scheduler should run again because of it."""
        key = key_of(obj)
        objs = self.store[kind]
        old = objs.get(key)
        if event == "DELETED":
            objs.pop(key, None)
        else:
            objs[key] = obj
        if kind == "pods":
            return self._pod(key, event, old, obj)
        if kind == "podgroups":
            self._decided.pop(key, None)  # a newer version (ours or anyone's) is the truth now
        if event == "DELETED" or old is None:
            if kind == "podgroups" and old is None:
                self._grown.add(key)  # a new group: nothing parked to let go but itself
            else:
                self.generation += 1
            return True
        if _digest(kind, old) == _digest(kind, obj):
            return False  # a status (our own write, a heartbeat): no decision changes
        self.generation += 1
        return True

    def _pod(self, key: str, event: str, old: Obj | None, obj: Obj) -> bool:
        if event == "DELETED":
            self._assumed.pop(key, None)
            self._deleting.pop(key, None)
            self._gated.discard(key)
            self.generation += 1
            return True
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        gates = {(g or {}).get("name") for g in spec.get("schedulingGates") or ()}
        was_gated = key in self._gated
        gated = bool(gates - self.lifted) and not spec.get("nodeName")
        if gated:
            self._gated.add(key)
        else:
            self._gated.discard(key)
        assumed = self._assumed.get(key)
        if assumed is not None and (spec.get("nodeName") or assumed.uid != meta.get("uid")):
            del self._assumed[key]  # confirmed by the watch (or the pod was replaced)
        if key in self._deleting and (meta.get("deletionTimestamp") or self._deleting[key] != meta.get("uid")):
            del self._deleting[key]
        change = _pod_change(old, obj)
        if change == FREED:
            self.generation += 1
        elif not gated and not spec.get("nodeName") and (old is None or was_gated):
            group = (meta.get("annotations") or {}).get(keys.GROUP_NAME)
            if group:
                self._grown.add(f"{meta.get('namespace', '')}/{group}")
        return change != QUIET


QUIET, CHANGED, FREED = 0, 1, 2  # what a pod event means to the loop (nothing, a cycle, room)


def _pod_change(old: Obj | None, new: Obj) -> int:
    """Whether a pod event changes anything the core decides on, and whether it frees room. A
    pod's status alone does not (a bound pod going Running; our own PodScheduled condition on a
    pending one), but a pod finishing does."""
    if old is None:
        return CHANGED
    new_meta, old_meta = new.get("metadata") or {}, old.get("metadata") or {}
    if bool(new_meta.get("deletionTimestamp")) != bool(old_meta.get("deletionTimestamp")):
        return FREED
    phase = (new.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed") and phase != (old.get("status") or {}).get("phase"):
        return FREED
    if bool((new.get("spec") or {}).get("nodeName")) != bool((old.get("spec") or {}).get("nodeName")):
        return CHANGED
    if (new.get("spec") or {}).get("nodeName"):
        return QUIET
    return CHANGED if _digest("pods", old) != _digest("pods", new) else QUIET


def _digest(kind: str, obj: Obj) -> tuple[Any, ...]:
    """What of an object the scheduler decides on, apart from what changes with every write of
    its status (resourceVersion, managed fields, status counts, heartbeats)."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")}
    status = obj.get("status") or {}
    if kind == "nodes":
        ready = tuple((c.get("type"), c.get("status")) for c in status.get("conditions") or ())
        return (meta, obj.get("spec"), status.get("allocatable"), ready)
    if kind == "queues":
        return (meta, obj.get("spec"), status.get("state"))
    if kind in ("podgroups", "pods"):
        return (meta, obj.get("spec"))
    return (meta, {k: v for k, v in obj.items() if k != "metadata"})  # a PriorityClass: value, policy
