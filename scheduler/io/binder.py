"""Carry out a plan's operations: evict victims, nominate nodes, bind gangs.

Binds are ``POST pods/{name}/binding`` with the pod's UID, so the apiserver refuses a bind
for a replaced pod; a bind is retried with backoff on transient errors (429, 5xx, dropped
connections). A 409 ("already assigned", or a UID mismatch) is settled by reading the pod: on
the intended node it is a success (our earlier attempt, or another leader, got there), else a
failure. Every Allocate is *assumed* in the cache before its request goes out; a failed bind
is forgotten (so the next cycle places the pod again), and recorded as a ``FailedScheduling``
Event and, if the pod is still unbound, a ``PodScheduled=False`` condition (kube-scheduler's
``handleBindingCycleError``; Volcano PR #3547): both queued on the status writer
(``status.StatusWriter.bind_failed``), which sends them paced, off the cycle's path. A gang's
binds are issued together.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bridge import errors, patching
from bridge.k8s import client, paths
from scheduler.api import plan
from scheduler.io import cache as sched_cache
from scheduler.io import status

__all__ = ["TRANSIENT", "Binder", "Hook", "Outcome", "binding", "merge"]

log = logging.getLogger(__name__)

TRANSIENT = frozenset({429, 500, 502, 503, 504})

Hook = Callable[[plan.Allocate], Awaitable[None]]


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    bound: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()  # (pod, why)
    evicted: tuple[str, ...] = ()
    nominated: tuple[str, ...] = ()
    ungated: tuple[str, ...] = ()


def merge(outcomes: Sequence[Outcome]) -> Outcome:
    """Several executions' outcomes as one, in order."""
    return Outcome(
        bound=tuple(p for o in outcomes for p in o.bound),
        failed=tuple(f for o in outcomes for f in o.failed),
        evicted=tuple(p for o in outcomes for p in o.evicted),
        nominated=tuple(p for o in outcomes for p in o.nominated),
        ungated=tuple(p for o in outcomes for p in o.ungated),
    )


def _split(pod: str) -> tuple[str, str]:
    namespace, _, name = pod.partition("/")
    return namespace, name


def binding(op: plan.Allocate) -> dict[str, Any]:
    _, name = _split(op.pod)
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "uid": op.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": op.node},
    }


class Binder:
    def __init__(
        self,
        api: client.Client,
        cache: sched_cache.Cache,
        writer: status.StatusWriter,
        *,
        concurrency: int = 64,
        retries: int = 3,
        backoff: float = 0.1,
        hook: Hook | None = None,
    ) -> None:
        self.api = api
        self.cache = cache
        self.writer = writer
        self.retries = retries
        self.backoff = backoff
        self.hook = hook
        self._gate = asyncio.Semaphore(concurrency)

    async def execute(self, operations: Sequence[plan.Operation]) -> Outcome:
        evicts = [op for op in operations if isinstance(op, plan.Evict)]
        nominations = [op for op in operations if isinstance(op, plan.Pipeline)]
        allocates = [op for op in operations if isinstance(op, plan.Allocate)]
        ungates = [op for op in operations if isinstance(op, plan.Ungate)]
        # Assume first, all at once: whatever happens to the requests, no later cycle may see
        # these pods as unplaced while their binds are in flight.
        for op in allocates:
            self.cache.assume(op.pod, op.uid, op.node)
        evicted = await asyncio.gather(*(self._evict(op) for op in evicts))
        nominated = await asyncio.gather(*(self._nominate(op) for op in nominations))
        results = await asyncio.gather(*(self._bind(op) for op in allocates))
        ungated = await asyncio.gather(*(self._ungate(op) for op in ungates))
        return Outcome(
            bound=tuple(op.pod for op, why in zip(allocates, results, strict=True) if why is None),
            failed=tuple((op.pod, why) for op, why in zip(allocates, results, strict=True) if why is not None),
            evicted=tuple(op.pod for op, ok in zip(evicts, evicted, strict=True) if ok),
            nominated=tuple(op.pod for op, ok in zip(nominations, nominated, strict=True) if ok),
            ungated=tuple(op.pod for op, ok in zip(ungates, ungated, strict=True) if ok),
        )

    async def _bind(self, op: plan.Allocate) -> str | None:
        """None on success, else why it failed (the pod is then forgotten and told)."""
        namespace, name = _split(op.pod)
        path = paths.resource("v1", "pods", namespace=namespace, name=name, subresource="binding")
        why: str
        async with self._gate:
            if self.hook is not None:
                await self.hook(op)
            for attempt in range(self.retries + 1):
                try:
                    await self.api.request("POST", path, body=binding(op))
                    return None
                except errors.ApiError as exc:
                    if exc.status == 409:
                        settled = await self._settle(op)
                        if settled is None:
                            return None
                        why = settled
                        break
                    why = f"binding rejected: {exc}"
                    if exc.status not in TRANSIENT:
                        break
                except client.TRANSPORT_ERRORS as exc:
                    why = f"binding failed: {exc!r}"
                if attempt < self.retries:
                    await asyncio.sleep(self.backoff * 2**attempt)
        self._failed(op, why)
        return why

    async def _settle(self, op: plan.Allocate) -> str | None:
        """After a 409: None if the pod (same UID) is on the intended node, else why not."""
        namespace, name = _split(op.pod)
        try:
            pod = await self.api.request("GET", paths.resource("v1", "pods", namespace=namespace, name=name))
        except errors.ApiError as exc:
            return f"pod is gone ({exc.status})"
        except client.TRANSPORT_ERRORS as exc:
            return f"binding failed: {exc!r} reading the pod after a 409"
        if (pod.get("metadata") or {}).get("uid") != op.uid:
            return "pod was replaced by a new one with the same name"
        spec = pod.get("spec") or {}
        node = spec.get("nodeName")
        if node == op.node:
            return None
        if node:
            return f"pod is already assigned to node {node}"
        if spec.get("schedulingGates"):
            return "pod has scheduling gates"
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            return "pod is being deleted"
        return "conflict (409) with the pod still unbound: decided again next cycle"

    def _failed(self, op: plan.Allocate, why: str) -> None:
        self.cache.forget(op.pod)
        log.warning("bind of %s to %s failed: %s", op.pod, op.node, why)
        pod = self.cache.pod(op.pod)
        if pod is None or (pod.get("metadata") or {}).get("uid") != op.uid:
            return
        message = f"failed to bind {op.pod} to {op.node}: {why}"
        # A pod bound elsewhere is scheduled: no False condition.
        self.writer.bind_failed(op.pod, pod, message, condition="already assigned" not in why)

    async def _evict(self, op: plan.Evict) -> bool:
        namespace, name = _split(op.pod)
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": op.uid}}
        try:
            async with self._gate:
                await self.api.request(
                    "DELETE", paths.resource("v1", "pods", namespace=namespace, name=name), body=body
                )
        except errors.ApiError as exc:
            if exc.status not in (404, 409):  # gone or replaced: nothing left to evict
                log.warning("evicting %s failed: %s", op.pod, exc)
            return False
        except client.TRANSPORT_ERRORS as exc:  # decided again next cycle
            log.warning("evicting %s failed: %r", op.pod, exc)
            return False
        self.cache.deleting(op.pod, op.uid)
        pod = self.cache.pod(op.pod) or {"metadata": {"namespace": namespace, "name": name, "uid": op.uid}}
        await status.event(self.api, pod, reason=op.reason, message=op.message, warning=True)
        return True

    async def _ungate(self, op: plan.Ungate) -> bool:
        """Remove the gate ``op.gate`` from the pod (same UID), by a JSON Patch diffed from the
        cached pod (``bridge.patching``), guarded by a ``test`` of the gates it was computed from:
        if they changed meanwhile the patch is refused and a later cycle computes it again."""
        pod = self.cache.pod(op.pod)
        if pod is None or (pod.get("metadata") or {}).get("uid") != op.uid:
            return False
        spec = pod.get("spec") or {}
        gates = list(spec.get("schedulingGates") or ())
        kept = [g for g in gates if (g or {}).get("name") != op.gate]
        if len(kept) == len(gates):
            return False
        desired = patching.assoc(pod, ("spec", "schedulingGates"), kept)
        ops = [{"op": "test", "path": "/spec/schedulingGates", "value": gates}, *patching.diff(pod, desired)]
        namespace, name = _split(op.pod)
        try:
            async with self._gate:
                await self.api.request(
                    "PATCH",
                    paths.resource("v1", "pods", namespace=namespace, name=name),
                    body=ops,
                    content_type=client.JSON_PATCH,
                )
        except errors.ApiError as exc:
            log.info("lifting %s from %s skipped: %s", op.gate, op.pod, exc)
            return False
        except client.TRANSPORT_ERRORS as exc:  # a dropped connection never fails the cycle: next one again
            log.info("lifting %s from %s skipped: %r", op.gate, op.pod, exc)
            return False
        return True

    async def _nominate(self, op: plan.Pipeline) -> bool:
        pod = self.cache.pod(op.pod)
        if pod is None or (pod.get("status") or {}).get("nominatedNodeName") == op.node:
            return False
        namespace, name = _split(op.pod)
        meta = pod.get("metadata") or {}
        body = {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "status": {"nominatedNodeName": op.node}}
        path = paths.resource("v1", "pods", namespace=namespace, name=name, subresource="status")
        try:
            async with self._gate:
                await self.api.request("PATCH", path, body=body, content_type=client.MERGE)
        except errors.ApiError as exc:
            log.info("nominating %s on %s skipped: %s", op.pod, op.node, exc)
            return False
        except client.TRANSPORT_ERRORS as exc:
            log.info("nominating %s on %s skipped: %r", op.pod, op.node, exc)
            return False
        return True
