"""The generic job reconciler: a kind's PodGroup, owned by the job, for every kind registered
with ``generic_reconciler`` (SparkApplication, SparkConnect, TFJob, PyTorchJob, MPIJob, XGBoostJob, PaddleJob,
JAXJob).

It knows no kind: the adapter says what the group is (``podgroup``) and when the job is over
(``finished``). The group is made with a controller ownerReference to the job (so it goes when
the job goes), corrected when an operator made a same-named one (``bridge.podgroups.correction``),
and deleted when the job finishes, which gives its queue back. It is never made in, or moved
to, a queue that does not admit the job's namespace (``bridge.queues.refusal``: the webhook skips
some namespaces, and a namespace's queue annotation may change after admission): a Warning
Event ``QueueNotAllowed`` on the job says so instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

from bridge import errors, podgroups
from bridge import facts as cluster_facts
from bridge.adapters import base
from bridge.k8s import client, events, paths, watching
from vbridge.controllers import podgroup_io

__all__ = ["JobReconciler"]

log = logging.getLogger(__name__)


class JobReconciler:
    def __init__(
        self, api: client.Client, adapter: base.Adapter, facts: cluster_facts.View, *, scheduler_name: str
    ) -> None:
        self.api = api
        self.adapter = adapter
        self.facts = facts
        self.scheduler_name = scheduler_name

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
        # Admission judged the queue; the group of an admitted job is kept whatever became of it,
        # except that it never goes to a queue that does not admit the namespace (below).
        facts = self.facts.context(meta.get("namespace", ""), scheduler_name=self.scheduler_name)
        ctx = dataclasses.replace(facts, queues=None)
        try:
            group = self.adapter.podgroup(obj, ctx)
        except errors.InvalidObjectError as exc:
            await events.emit(self.api, obj, reason="PodGroupNotCreated", message=str(exc), warning=True)
            return
        if group is None:
            return
        name = group["metadata"]["name"]
        if self.adapter.finished(obj):
            pg_path = paths.resource(podgroup_io.PG, "podgroups", namespace=group["metadata"]["namespace"], name=name)
            try:
                await self.api.request("DELETE", pg_path)
                await events.emit(
                    self.api, obj, reason="PodGroupDeleted", message=f"job finished: PodGroup {name} released its queue"
                )
            except errors.ApiError as exc:
                if exc.status != 404:
                    raise
            return
        refused = facts.refusal(group["spec"]["queue"])
        if refused is not None:
            # A namespace the webhook skips (kube-system, ours), or a namespace annotation changed
            # since: the group is neither made nor moved there (the scheduler would hold it anyway).
            message = f"PodGroup {name} not made or moved: {refused}"
            await events.emit(self.api, obj, reason="QueueNotAllowed", message=message, warning=True)
            return
        group["metadata"]["ownerReferences"] = [podgroups.owner_ref(obj)]
        outcome = await podgroup_io.ensure(self.api, group)
        if outcome != "unchanged":
            reason = f"PodGroup{outcome.capitalize()}"
            await events.emit(self.api, obj, reason=reason, message=podgroups.describe(group))
