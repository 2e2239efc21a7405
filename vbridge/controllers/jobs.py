"""Job kinds (SparkApplication, TFJob, PyTorchJob, MPIJob) → their PodGroup, owned by the job."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

from bridge import errors, podgroups
from bridge.adapters import base
from bridge.k8s import client, events, paths, watching
from vbridge.controllers import podgroup_io

__all__ = ["JobReconciler", "finished"]

log = logging.getLogger(__name__)
_SPARK_DONE = {"COMPLETED", "FAILED"}


def finished(obj: dict[str, Any]) -> bool:
    """A Kubeflow job with a true Succeeded/Failed condition, or a SparkApplication in a final state."""
    status = obj.get("status") or {}
    if obj.get("kind") == "SparkApplication":
        return (status.get("applicationState") or {}).get("state") in _SPARK_DONE
    return any(
        c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True" for c in status.get("conditions") or []
    )


class JobReconciler:
    def __init__(self, api: client.Client, adapter: base.Adapter, facts: Any, *, scheduler_name: str) -> None:
        self.api = api
        self.adapter = adapter
        self.facts = facts
        self.scheduler_name = scheduler_name
        self.reconciled = 0

    async def run(self) -> None:
        """Watch every version of the kind; a kind whose CRD is absent is retried until it appears."""
        reg = self.adapter.registration
        await asyncio.gather(*(self._watch(f"{reg.group}/{v}") for v in reg.versions))

    async def _watch(self, api_version: str) -> None:
        path = paths.resource(api_version, self.adapter.registration.plural)
        await watching.follow(self.api, path, self._on_event)

    async def _on_event(self, kind: str, obj: dict[str, Any]) -> None:
        if kind in ("ADDED", "MODIFIED"):
            await self.reconcile(obj)

    async def reconcile(self, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return  # the garbage collector removes the owned PodGroup
        ctx = dataclasses.replace(
            self.facts.context(meta.get("namespace", ""), scheduler_name=self.scheduler_name), check_queues=False
        )
        try:
            result = self.adapter.translate(obj, ctx)
        except errors.InvalidObjectError as exc:
            await events.emit(self.api, obj, reason="PodGroupNotCreated", message=str(exc), warning=True)
            return
        if result is None or result.podgroup is None:
            return
        group = result.podgroup
        pg_path = paths.resource(
            podgroup_io.PG, "podgroups", namespace=group["metadata"]["namespace"], name=group["metadata"]["name"]
        )
        if finished(obj):
            try:
                await self.api.request("DELETE", pg_path)
                await events.emit(
                    self.api,
                    obj,
                    reason="PodGroupDeleted",
                    message=f"job finished: PodGroup {group['metadata']['name']} released its queue",
                )
            except errors.ApiError as exc:
                if exc.status != 404:
                    raise
            return
        group["metadata"]["ownerReferences"] = [podgroups.owner_ref(obj)]
        outcome = await podgroup_io.ensure(self.api, group)
        self.reconciled += 1
        if outcome != "unchanged":
            spec = group["spec"]
            await events.emit(
                self.api,
                obj,
                reason=f"PodGroup{outcome.capitalize()}",
                message=f"PodGroup {group['metadata']['name']}: minMember {spec['minMember']}, queue {spec['queue']}, "
                f"minResources {spec.get('minResources', {})}",
            )
