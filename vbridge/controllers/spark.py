"""spark-submit pods: complete the driver's PodGroup, then lift its gate; group client-mode executors."""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from typing import Any

from bridge import errors, keys, patching, podgroups
from bridge import facts as cluster_facts
from bridge.adapters.spark import conf as sparkconf
from bridge.adapters.spark import driver, templates
from bridge.k8s import client, events, paths, watching
from vbridge.controllers import podgroup_io

__all__ = ["SparkReconciler"]

log = logging.getLogger(__name__)


class SparkReconciler:
    def __init__(
        self,
        api: client.Client,
        facts: cluster_facts.View,
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
        self._busy: set[str] = set()
        # The latest event of a pod that came while its work ran: handled once that work ends,
        # so an event that may let the work through (the group now exists) is never lost.
        self._again: dict[str, dict[str, Any]] = {}
        # Each driver's spark.properties as its first pass found it (None: not found in time), so
        # a later pass (its PodGroup arrived, a gate to lift) does not wait for it again.
        self._confs: dict[str, dict[str, str] | None] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        # Drivers waiting for an operator's group: the last wait (watching.Backoff), by pod uid.
        self._delays: dict[str, float] = {}
        self._backoff = watching.Backoff(first=0.5)
        self._timers: set[str] = set()

    async def run(self) -> None:
        path = paths.resource("v1", "pods")
        await watching.follow(self.api, path, self._on_pod, params={"labelSelector": keys.SPARK_ROLE})

    def _on_pod(self, kind: str, pod: dict[str, Any]) -> None:
        uid = pod["metadata"].get("uid", "")
        if kind not in ("ADDED", "MODIFIED"):
            self._again.pop(uid, None)
            self._confs.pop(uid, None)
            self._delays.pop(uid, None)
            return
        if uid in self._busy:
            self._again[uid] = pod
            return
        if driver.gated_driver(pod):
            self._spawn(uid, self._driver(pod))
        elif driver.ungrouped_executor(pod):
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
                again = self._again.pop(uid, None)
                if again is not None:
                    self._on_pod("MODIFIED", again)

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _later(self, pod: dict[str, Any]) -> None:
        """Handle the driver again after a backoff, as the apiserver then has it: the group an
        operator makes may come with no event on the pod (a gated pod changes no more)."""
        uid, meta = pod["metadata"].get("uid", ""), pod["metadata"]
        if uid in self._timers:
            return  # already to be looked at again
        self._timers.add(uid)
        delay = self._delays[uid] = self._backoff.next(self._delays.get(uid, 0.0))

        async def again() -> None:
            await asyncio.sleep(delay)
            self._timers.discard(uid)  # so the pass below, or a failure, may set another
            if uid not in self._delays:
                return  # the pod is gone, or an event's pass found the group
            path = paths.resource("v1", "pods", namespace=meta["namespace"], name=meta["name"])
            try:
                fresh = await self.api.request("GET", path)
            except errors.ApiError as exc:
                if exc.status == 404:
                    self._delays.pop(uid, None)
                    return
                log.warning("could not read Spark driver %s again: %s", meta["name"], exc)
                self._later(pod)
            except client.TRANSPORT_ERRORS as exc:
                log.warning("could not read Spark driver %s again: %r", meta["name"], exc)
                self._later(pod)
            else:
                self._on_pod("MODIFIED", fresh)

        task = asyncio.create_task(again())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _conf(self, pod: dict[str, Any]) -> dict[str, str] | None:
        """The driver's spark.properties; Spark writes the ConfigMap just after the pod, so the
        first pass waits a little, and later passes take what it found."""
        uid = pod["metadata"].get("uid", "")
        if uid not in self._confs:
            self._confs[uid] = await self._read_conf(pod)
        return self._confs[uid]

    async def _read_conf(self, pod: dict[str, Any]) -> dict[str, str] | None:
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
        group_name = (meta.get("annotations") or {}).get(keys.GROUP_NAME, "")
        # Even a driver whose group an operator makes waits for its conf: spark-submit writes the
        # ConfigMap the driver mounts just after the pod, so the gate is not lifted before it.
        conf = await self._conf(pod)
        if not driver.group_is_ours(pod):
            if await self._get_group(meta["namespace"], group_name) is None:
                self._later(pod)  # not made yet (spark-<app>-pg): looked for again, backing off
                return
            self._delays.pop(meta.get("uid", ""), None)
            await self._lift_gate(pod)
            return
        if conf is None:
            await events.emit(
                self.api,
                pod,
                reason="SparkConfNotFound",
                warning=True,
                message="no spark.properties ConfigMap; sizing executors by Spark's defaults",
            )
        ctx = self.facts.context(meta["namespace"], scheduler_name=self.scheduler_name)
        name, template = templates.choose(
            self.templates,
            pod_annotations=meta.get("annotations") or {},
            conf=conf or {},
            namespace_annotations=ctx.namespace_annotations,
        )
        try:
            group = driver.podgroup(pod, ctx, conf=conf or {}, template=template)
        except errors.QueueError as exc:
            await self._stuck(pod, "QueueRejected", f"{exc}; the driver stays gated")
            return
        except errors.InvalidObjectError as exc:
            await self._stuck(pod, "PodGroupNotCreated", f"{exc}; the driver stays gated")
            return
        if group is not None:
            group["metadata"]["ownerReferences"] = [podgroups.owner_ref(pod)]
            existing = await self._get_group(meta["namespace"], group_name)
            fill_only = existing is not None and driver.made_by_others(existing)
            await podgroup_io.ensure(self.api, group, fill_only=fill_only)
            detail = f"template {name}" if name else "no template"
            message = f"{podgroups.describe(group)} ({detail})"
            await events.emit(self.api, pod, reason="PodGroupReady", message=message)
        await self._lift_gate(pod)

    async def _stuck(self, pod: dict[str, Any], reason: str, message: str) -> None:
        """A Warning Event and the condition ``vbridge.io/PodGroupReady=False``, once per distinct cause.

        Writing the condition changes the pod, so the watch hands it back; the second pass finds
        the condition already set and writes (and tells) nothing more.
        """
        if await self._set_condition(pod, ready=False, reason=reason, message=message):
            await events.emit(self.api, pod, reason=reason, message=message, warning=True)

    async def _set_condition(self, pod: dict[str, Any], *, ready: bool, reason: str, message: str) -> bool:
        meta = pod["metadata"]
        path = paths.resource("v1", "pods", namespace=meta["namespace"], name=meta["name"])
        current = await self.api.request("GET", path)
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        desired = driver.with_condition(current, ready=ready, reason=reason, message=message, now=now)
        if desired is None:
            return False
        await self._patch(current, desired, subresource="status")
        return True

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
        if any(c.get("type") == driver.CONDITION for c in (current.get("status") or {}).get("conditions") or []):
            await self._set_condition(current, ready=True, reason="PodGroupReady", message="the PodGroup is complete")
            current = await self.api.request(
                "GET", paths.resource("v1", "pods", namespace=meta["namespace"], name=meta["name"])
            )
        await self._patch(current, driver.without_gate(current))

    async def _patch(self, current: dict[str, Any], desired: dict[str, Any], *, subresource: str | None = None) -> None:
        """A JSON Patch by diff, guarded by the resourceVersion read (a conflict is retried on the next event)."""
        meta = current["metadata"]
        ops = patching.diff(current, desired)
        if not ops:
            return
        ops.insert(0, {"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]})
        await self.api.request(
            "PATCH",
            paths.resource("v1", "pods", namespace=meta["namespace"], name=meta["name"], subresource=subresource),
            body=ops,
            content_type=client.JSON_PATCH,
        )

    async def _executor(self, pod: dict[str, Any]) -> None:
        """Client mode: no driver pod made the group, so the executors' group is made here."""
        meta = pod["metadata"]
        existing = await self._get_group(meta["namespace"], meta["annotations"][keys.GROUP_NAME])
        if not driver.executor_may_make(existing):
            return
        ctx = self.facts.context(meta["namespace"], scheduler_name=self.scheduler_name)
        group = driver.executor_podgroup(pod, ctx)
        refused = ctx.refusal(group["spec"]["queue"])
        if refused is not None:  # admitted while the webhook was down, or in a namespace it skips
            await self._stuck(pod, "QueueNotAllowed", f"{refused}; no PodGroup is made for these executors")
            return
        await podgroup_io.ensure(self.api, group, fill_only=True)
