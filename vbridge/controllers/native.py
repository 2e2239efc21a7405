"""The native backend's objects: a ``Workload`` and a ``PodGroup`` (``scheduling.k8s.io/v1beta1``)
for every Volcano PodGroup, made by ``bridge.native.workloads`` (pure).

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
- DELETED (the job finished and its reconciler released the group, or the job went): both
  twins are deleted. The native PodGroup's own finalizer keeps it until its pods have ended.

The pods were stamped at admission (``bridge.native.pods``); kube-scheduler holds a pod whose
PodGroup is missing and looks again once it appears, and the queue gate holds them all before.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

from bridge import defaults, errors, keys, patching
from bridge.k8s import client, events, paths, watching
from bridge.native import workloads

__all__ = ["NativeReconciler"]

log = logging.getLogger(__name__)

_PLURALS = {"Workload": "workloads", "PodGroup": "podgroups"}
REFUSED = "Refused"
_REFUSALS = (400, 403, 422)  # what the apiserver answers a create it will not make, whoever asks again


def _path(obj: dict[str, Any], *, named: bool = True) -> str:
    meta = obj["metadata"]
    return paths.resource(
        workloads.API,
        _PLURALS[obj["kind"]],
        namespace=meta["namespace"],
        name=meta["name"] if named else None,
    )


class NativeReconciler:
    def __init__(self, api: client.Client) -> None:
        self.api = api

    async def run(self) -> None:
        await watching.follow(self.api, paths.resource(defaults.PODGROUP_API, "podgroups"), self._on_event)

    async def _on_event(self, kind: str, pg: dict[str, Any]) -> None:
        if kind == "DELETED":
            await self.release(pg)
        elif not (pg.get("metadata") or {}).get("deletionTimestamp"):
            await self.reconcile(pg)

    async def reconcile(self, pg: dict[str, Any]) -> None:
        """Both twins of ``pg`` exist and match it (the Workload first: the PodGroup refers to it)."""
        for desired in (workloads.workload(pg), workloads.podgroup(pg)):
            try:
                created = await self._create(desired)
            except errors.ApiError as exc:
                if exc.status not in _REFUSALS:
                    raise
                where = f"{desired['kind']} {desired['metadata']['namespace']}/{desired['metadata']['name']}"
                await self._refused(pg, f"{where} ({workloads.API}) refused: {exc.message or exc.reason}")
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
        for twin in (workloads.podgroup(pg), workloads.workload(pg)):
            try:
                await self.api.request("DELETE", _path(twin))
            except errors.ApiError as exc:
                if exc.status != 404:
                    raise
