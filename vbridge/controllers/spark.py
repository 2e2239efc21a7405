"""spark-submit pods: complete the driver's PodGroup, then lift its gate; group client-mode executors."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import Any

from bridge import errors, keys, patching, podgroups, queues
from bridge.adapters.spark import conf as sparkconf
from bridge.adapters.spark import pod as spark_pod
from bridge.k8s import client, events, paths, watching
from vbridge.controllers import podgroup_io, templates

__all__ = ["SparkReconciler"]

log = logging.getLogger(__name__)


class SparkReconciler:
    def __init__(
        self,
        api: client.Client,
        facts: Any,
        *,
        scheduler_name: str,
        templates_by_name: dict[str, dict[str, Any]],
        conf_timeout: float = 30.0,
    ) -> None:
        self.api = api
        self.facts = facts
        self.scheduler_name = scheduler_name
        self.templates = templates_by_name
        self.conf_timeout = conf_timeout
        self.adapter = spark_pod.SparkPodAdapter()
        self._busy: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        path = paths.resource("v1", "pods")
        await watching.follow(self.api, path, self._on_pod, params={"labelSelector": keys.SPARK_ROLE})

    def _on_pod(self, kind: str, pod: dict[str, Any]) -> None:
        if kind not in ("ADDED", "MODIFIED"):
            return
        uid = pod["metadata"].get("uid", "")
        if uid in self._busy:
            return
        role = sparkconf.role(pod)
        gates = [g.get("name") for g in pod.get("spec", {}).get("schedulingGates") or []]
        if role == "driver" and keys.SPARK_GATE in gates:
            self._spawn(uid, self._driver(pod))
        elif (
            role == "executor"
            and not pod["metadata"].get("deletionTimestamp")  # going: it must not (re)make a group
            and (pod["metadata"].get("annotations") or {}).get(keys.GROUP_NAME)
            == spark_pod.group_name(sparkconf.app_id(pod))
        ):
            self._spawn(uid, self._executor(pod))

    def _spawn(self, uid: str, work: Any) -> None:
        self._busy.add(uid)

        async def guarded() -> None:
            try:
                await work
            except Exception:
                log.exception("spark reconcile failed")
            finally:
                self._busy.discard(uid)

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _conf(self, pod: dict[str, Any]) -> dict[str, str] | None:
        """The driver's spark.properties; Spark writes the ConfigMap just after the pod, so wait a little."""
        name = sparkconf.conf_map_name(pod)
        if name is None:
            return None
        path = paths.resource("v1", "configmaps", namespace=pod["metadata"]["namespace"], name=name)
        deadline = time.monotonic() + self.conf_timeout
        while True:
            try:
                cm = await self.api.request("GET", path)
                return sparkconf.parse_properties((cm.get("data") or {}).get("spark.properties", ""))
            except errors.ApiError as exc:
                if exc.status != 404 or time.monotonic() > deadline:
                    return None
            await asyncio.sleep(0.2)

    async def _driver(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        conf = await self._conf(pod)
        if conf is None:
            await events.emit(
                self.api,
                pod,
                reason="SparkConfNotFound",
                warning=True,
                message="no spark.properties ConfigMap; sizing executors by Spark's defaults",
            )
        base_ctx = self.facts.context(meta["namespace"], scheduler_name=self.scheduler_name)
        name, template = templates.choose(
            self.templates,
            pod_annotations=meta.get("annotations") or {},
            conf=conf or {},
            namespace_annotations=base_ctx.namespace_annotations,
        )
        ctx = dataclasses.replace(base_ctx, conf=conf or {}, template=template)
        try:
            result = self.adapter.translate(pod, ctx)
        except errors.QueueError as exc:
            await events.emit(
                self.api, pod, reason="QueueRejected", message=f"{exc}; the driver stays gated", warning=True
            )
            return
        except errors.InvalidObjectError as exc:
            await events.emit(self.api, pod, reason="PodGroupNotCreated", message=str(exc), warning=True)
            return
        group_name = (meta.get("annotations") or {}).get(keys.GROUP_NAME, "")
        if result is not None and result.podgroup is not None:
            group = result.podgroup
            group["metadata"]["ownerReferences"] = [podgroups.owner_ref(pod)]
            existing = await self._get_group(meta["namespace"], group_name)
            made_by_others = existing is not None and keys.MANAGED_BY not in (existing["metadata"].get("labels") or {})
            await podgroup_io.ensure(self.api, group, fill_only=made_by_others)
            detail = f"template {name}" if name else "no template"
            await events.emit(
                self.api, pod, reason="PodGroupReady", message=f"PodGroup {group_name} ({detail}): {group['spec']}"
            )
        elif await self._get_group(meta["namespace"], group_name) is None:
            return  # an operator's group (spark-<app>-pg) not made yet: the next pod event retries
        await self._lift_gate(pod)

    async def _get_group(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return await self.api.request(
                "GET", paths.resource(podgroup_io.PG, "podgroups", namespace=namespace, name=name)
            )
        except errors.ApiError as exc:
            if exc.status == 404:
                return None
            raise

    async def _lift_gate(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        current = await self.api.request(
            "GET", paths.resource("v1", "pods", namespace=meta["namespace"], name=meta["name"])
        )
        desired = {
            **current,
            "spec": {
                **current["spec"],
                "schedulingGates": [
                    g for g in current["spec"].get("schedulingGates") or [] if g.get("name") != keys.SPARK_GATE
                ],
            },
        }
        ops = patching.diff(current, desired)
        if ops:
            ops.insert(
                0, {"op": "test", "path": "/metadata/resourceVersion", "value": current["metadata"]["resourceVersion"]}
            )
            await self.api.request(
                "PATCH",
                paths.resource("v1", "pods", namespace=meta["namespace"], name=meta["name"]),
                body=ops,
                content_type=client.JSON_PATCH,
            )

    async def _executor(self, pod: dict[str, Any]) -> None:
        """Client mode: no driver pod made the group, so the executors' group is made here.

        Every executor is a (non-controller) owner, so the group lives while any executor does.
        """
        meta = pod["metadata"]
        name = meta["annotations"][keys.GROUP_NAME]
        existing = await self._get_group(meta["namespace"], name)
        if existing is not None and keys.MANAGED_BY not in (existing["metadata"].get("labels") or {}):
            return  # Spark or a driver made it
        base_ctx = self.facts.context(meta["namespace"], scheduler_name=self.scheduler_name)
        queue = queues.resolve(
            field=None, job_annotations=meta.get("annotations"), namespace_annotations=base_ctx.namespace_annotations
        )
        group = podgroups.build(
            name=name,
            namespace=meta["namespace"],
            min_member=1,
            queue=queue,
            priority_class=pod["spec"].get("priorityClassName"),
        )
        owner = {**podgroups.owner_ref(pod), "controller": False, "blockOwnerDeletion": False}
        if existing is not None and any(
            r.get("kind") == "Pod" and r.get("controller") for r in existing["metadata"].get("ownerReferences") or []
        ):
            return  # a driver owns it (cluster mode)
        group["metadata"]["ownerReferences"] = [owner]
        await podgroup_io.ensure(self.api, group, fill_only=True)
