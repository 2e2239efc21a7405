"""The node simulator's I/O loop: register nodes, then act on the pods bound to them.

One watch on all bound pods feeds a work queue; a fixed pool of workers writes pod status
(Running, then Succeeded or Failed) and finishes deletions, so the API request rate is bounded
and no pod is handled twice at once. Timers for finishing pods live in one heap-free dict of
asyncio handles keyed by pod UID.

With a ``runtime`` (opt-in; see ``runtime``), the pods it handles run for real: starting and
stopping them is the runtime's (which reports their status), finishing the deletion is ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import ipaddress
import itertools
from collections.abc import Sequence
from typing import Any

import vbridge.nodesim as nodesim
from bridge import defaults, errors
from bridge.k8s import client, paths, watching
from vbridge.nodesim import nodes, podstatus
from vbridge.nodesim import runtime as node_runtime

__all__ = ["Simulator", "Stats"]

_POD_NET = ipaddress.ip_network("10.128.0.0/9")
_NODE_NET = ipaddress.ip_network("172.30.0.0/16")


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclasses.dataclass
class Stats:
    nodes: int = 0
    running: int = 0
    finished: int = 0
    deleted: int = 0
    errors: int = 0


class Simulator:
    def __init__(
        self,
        api: client.Client,
        specs: Sequence[nodes.NodeSpec],
        *,
        default_run_seconds: float | None = None,
        workers: int = 32,
        runtime: node_runtime.Runtime | None = None,
    ) -> None:
        self.api = api
        self.specs = {s.name: s for s in specs}
        self.default_run_seconds = default_run_seconds
        self.workers = workers
        self.runtime = runtime
        self._stopping: set[asyncio.Task[None]] = set()
        self.stats = Stats()
        self._ips = (str(ip) for ip in itertools.islice(_POD_NET.hosts(), None))
        self._node_ip = {s.name: str(_NODE_NET[i + 1]) for i, s in enumerate(specs)}
        if runtime is not None:
            self._node_ip.update({n: net.host_ip for n, net in runtime.config.nodes.items() if n in self._node_ip})
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self._started: set[str] = set()  # pod UIDs moved to Running by us
        self._started_stop: set[str] = set()  # runtime pods being stopped
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: list[asyncio.Task[None]] = []

    # -- nodes -------------------------------------------------------------------------------

    async def register_nodes(self) -> None:
        """Create (or adopt) every node and mark it Ready; bounded concurrency."""
        gate = asyncio.Semaphore(self.workers)

        async def one(spec: nodes.NodeSpec) -> None:
            async with gate:
                base = paths.resource("v1", "nodes")
                try:
                    await self.api.request("POST", base, body=self._node_body(spec))
                except errors.ApiError as exc:
                    if exc.status != 409:
                        raise
                status = nodes.node_status(spec, address=self._node_ip[spec.name], now=_now())
                await self.api.request("PATCH", f"{base}/{spec.name}/status", body=status, content_type=client.MERGE)
                # The apiserver's TaintNodesByCondition admission taints a new node not-ready; the node
                # lifecycle controller (off here: it would evict pods with no kubelet) lifts it once the
                # node is Ready. We do that part of its job, keeping only the taints the spec asks for.
                taints = self._node_body(spec)["spec"].get("taints")
                await self.api.request(
                    "PATCH", f"{base}/{spec.name}", body={"spec": {"taints": taints}}, content_type=client.MERGE
                )
                self.stats.nodes += 1

        await asyncio.gather(*(one(s) for s in self.specs.values()))

    def _node_body(self, spec: nodes.NodeSpec) -> dict[str, Any]:
        body = nodes.node_body(spec)
        if self.runtime is not None and spec.name in self.runtime.config.nodes:
            body["metadata"]["labels"][nodesim.RUNTIME_LABEL] = "process"
        return body

    # -- pods --------------------------------------------------------------------------------

    async def run(self) -> None:
        """Register nodes, then serve pods until cancelled."""
        await self.register_nodes()
        await self.serve()

    async def serve(self) -> None:
        """Act on the pods bound to our nodes until cancelled."""
        self._tasks = [asyncio.create_task(self._worker()) for _ in range(self.workers)]
        try:
            await watching.follow(
                self.api, paths.resource("v1", "pods"), self._on_event, params={"fieldSelector": "spec.nodeName!="}
            )
        finally:
            for task in self._tasks:
                task.cancel()
            for handle in self._timers.values():
                handle.cancel()
            await asyncio.gather(*self._tasks, *self._stopping, return_exceptions=True)
            if self.runtime is not None:
                await self.runtime.close()

    def _on_event(self, kind: str, pod: dict[str, Any]) -> None:
        meta, spec = pod.get("metadata", {}), pod.get("spec", {})
        uid = meta.get("uid", "")
        if kind == "SYNCED":
            return
        if kind == "DELETED":
            self._forget(uid)
            if self.runtime is not None and self.runtime.has(uid):  # deleted under us: stop at once
                self._track(asyncio.create_task(self.runtime.stop(uid, 0)))
            return
        if spec.get("nodeName") not in self.specs:
            return
        phase = pod.get("status", {}).get("phase", "Pending")
        real = self.runtime is not None and self.runtime.handles(pod)
        if meta.get("deletionTimestamp"):
            self._forget(uid)
            if real and self.runtime is not None and self.runtime.has(uid):
                if uid not in self._started_stop:
                    self._started_stop.add(uid)
                    self._track(asyncio.create_task(self._graceful(pod)))
            else:
                self._queue.put_nowait(("delete", pod))
        elif phase == "Pending" and uid not in self._started:
            self._started.add(uid)
            self._queue.put_nowait(("start", pod))
        elif phase == "Running" and uid not in self._timers and not real:
            self._schedule_finish(pod)

    def _track(self, task: asyncio.Task[None]) -> None:
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def _graceful(self, pod: dict[str, Any]) -> None:
        """A runtime pod being deleted: stop its processes within its grace period, then finish."""
        assert self.runtime is not None
        meta = pod["metadata"]
        grace = meta.get("deletionGracePeriodSeconds")
        if grace is None:
            grace = pod["spec"].get("terminationGracePeriodSeconds", defaults.SIM_GRACE_SECONDS)
        try:
            await self.runtime.stop(meta["uid"], float(grace))
        finally:
            self._started_stop.discard(meta["uid"])
            self._queue.put_nowait(("delete", pod))

    def _forget(self, uid: str) -> None:
        handle = self._timers.pop(uid, None)
        if handle:
            handle.cancel()

    def _schedule_finish(self, pod: dict[str, Any]) -> None:
        seconds = podstatus.run_seconds(pod, self.default_run_seconds)
        if seconds is None:
            return
        uid = pod["metadata"]["uid"]
        loop = asyncio.get_running_loop()
        self._timers[uid] = loop.call_later(seconds, self._queue.put_nowait, ("finish", pod))

    async def _worker(self) -> None:
        while True:
            action, pod = await self._queue.get()
            try:
                await self._act(action, pod)
            except errors.ApiError as exc:
                if exc.status not in (404, 409):  # gone or changed under us: the watch brings news
                    self.stats.errors += 1
                self._started.discard(pod["metadata"].get("uid", ""))  # let a later event retry
            except Exception:
                self.stats.errors += 1
                self._started.discard(pod["metadata"].get("uid", ""))
            finally:
                self._queue.task_done()

    async def _act(self, action: str, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        path = paths.resource("v1", "pods", namespace=meta["namespace"], name=meta["name"])
        if action == "start" and self.runtime is not None and self.runtime.handles(pod):
            await self.runtime.start(pod)
            self.stats.running += 1
        elif action == "start":
            node = pod["spec"]["nodeName"]
            body = podstatus.running(pod, pod_ip=next(self._ips), host_ip=self._node_ip[node], now=_now())
            body["metadata"] = {"uid": meta["uid"]}  # precondition: the same pod, not a namesake
            await self.api.request("PATCH", f"{path}/status", body=body, content_type=client.STRATEGIC)
            self.stats.running += 1
        elif action == "finish":
            self._timers.pop(meta["uid"], None)
            body = podstatus.finished(pod, code=podstatus.exit_code(pod), now=_now())
            body["metadata"] = {"uid": meta["uid"]}
            await self.api.request("PATCH", f"{path}/status", body=body, content_type=client.STRATEGIC)
            self.stats.finished += 1
        elif action == "delete":
            with contextlib.suppress(errors.ApiError):
                await self.api.request(
                    "DELETE",
                    path,
                    body={
                        "kind": "DeleteOptions",
                        "apiVersion": "v1",
                        "gracePeriodSeconds": 0,
                        "preconditions": {"uid": meta["uid"]},
                    },
                )
                self.stats.deleted += 1
