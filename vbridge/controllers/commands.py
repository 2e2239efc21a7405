"""``bus.volcano.sh/v1alpha1`` Commands: vcctl's write verbs carried out, then the Command is gone.

One watch on Commands in every namespace. Each new one is read by ``bridge.bus.order``; one that
cannot be carried out (no target, a kind not served, an action its target has not, a target that
does not exist) gets a Warning Event ``InvalidCommand`` saying why and is left alone (vcctl makes
the target its owner, so it goes with its target). Commands for one target are carried out one at
a time, in the order the watch shows them:

- a Job's, once the Job has no command pending (the ``vbridge.io/job-command`` annotation the
  Job controller removes when it has carried one out): the Command is deleted, the annotation
  set to its action (with the Job's resourceVersion as precondition) and a ``CommandIssued`` Event
  recorded on the Job, as Volcano does; the Job controller then carries it out exactly as it does
  ``vbridge job suspend|resume`` (one path for both);
- a Queue's: the Command is deleted, then :func:`operate_queue` writes the state
  ``bridge.bus.queue_state`` gives for the queue's PodGroups: closed with groups left it is
  ``Closing``, and the scheduler's status writer (the same state machine) makes it ``Closed``
  once they are gone. ``vbridge queue open|close`` calls :func:`operate_queue` too.

Deleting before acting makes a Command happen at most once, as in Volcano: one another replica
deleted first (404) is not carried out again.

Before anything is done the Command's author must be allowed to change its target (Volcano asks
nothing): the author admission recorded (``bridge.bus.author``) gets a SubjectAccessReview for
``update`` on the target (``bridge.bus.access_review``). A Command without a recorded author, one
whose author may not, or one naming an object of another namespace (by namespace or uid) is
refused: a Warning Event ``CommandRefused`` saying why, then the Command is deleted; its target
is not touched.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from bridge import bus, defaults, errors
from bridge.adapters.vcjob import names
from bridge.k8s import client, events, paths, watching

__all__ = ["ISSUED", "CommandController", "Obj", "operate_queue"]

log = logging.getLogger(__name__)
Obj = dict[str, Any]
_AUTHZ_API = "authorization.k8s.io/v1"
ISSUED = "Start to execute command {}, and clean it up to make sure executed not more than once."


async def _get(api: client.Client, path: str, what: str) -> Obj:
    try:
        found: Obj = await api.request("GET", path)
    except errors.ApiError as exc:
        if exc.status == 404:
            raise errors.InvalidObjectError(f"{what} not found") from exc
        raise
    return found


async def operate_queue(api: client.Client, name: str, action: str) -> str:
    """Open or close queue ``name`` as Volcano's queue controller does; the state written."""
    path = paths.resource(defaults.QUEUE_API, "queues", name=name)
    while True:
        queue = await _get(api, path, f"Queue {name}")
        listed = await api.request("GET", paths.resource(defaults.PODGROUP_API, "podgroups"))
        groups = sum(1 for g in listed.get("items", []) if (g.get("spec") or {}).get("queue") == name)
        state = bus.queue_state((queue.get("status") or {}).get("state"), action, groups)
        body = {"metadata": {"resourceVersion": queue["metadata"]["resourceVersion"]}, "status": {"state": state}}
        try:
            await api.request("PATCH", f"{path}/status", body=body, content_type=client.MERGE)
        except errors.ApiError as exc:
            if exc.status == 409:  # the scheduler wrote its counts meanwhile: decide again
                continue
            raise
        return state


class CommandController:
    def __init__(
        self,
        api: client.Client,
        *,
        retry: float = defaults.COMMAND_RETRY_SECONDS,
        most: float = defaults.COMMAND_RETRY_MOST,
    ) -> None:
        self.api = api
        self.retry, self.most = retry, most
        self._seen: set[str] = set()  # uids of the Commands taken up and not deleted
        self._lines: dict[str, asyncio.Lock] = {}  # target -> one Command at a time
        self._tasks: set[asyncio.Task[None]] = set()
        self.carried_out = 0  # Commands carried out, for tests and metrics
        self.refused = 0  # Commands refused (no author, or one who may not change the target)

    async def run(self) -> None:
        try:
            await watching.follow(self.api, paths.resource(defaults.BUS_API, "commands"), self._on_command)
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _on_command(self, kind: str, command: Obj) -> None:
        uid = str((command.get("metadata") or {}).get("uid") or "")
        if kind == "DELETED":
            self._seen.discard(uid)  # a retry in progress stops
            return
        if uid in self._seen:
            return
        self._seen.add(uid)
        task = asyncio.create_task(self._carry_out({**command, "apiVersion": defaults.BUS_API, "kind": "Command"}))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _carry_out(self, command: Obj) -> None:
        meta = command["metadata"]
        delay = self.retry
        while meta["uid"] in self._seen:  # until carried out, refused, or deleted by someone
            try:
                order = bus.order(command)
                async with self._lines.setdefault(order.target, asyncio.Lock()):
                    if order.kind == "Job":
                        await self._job(command, order)
                    else:
                        await self._queue(command, order)
                return
            except errors.ForbiddenError as exc:
                await self._refuse(command, str(exc))
                return
            except errors.InvalidObjectError as exc:
                await events.emit(self.api, command, reason="InvalidCommand", message=str(exc), warning=True)
                return
            except errors.ApiError as exc:
                log.warning("Command %s/%s: %s; trying again in %.0f s", meta["namespace"], meta["name"], exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.most)

    async def _refuse(self, command: Obj, why: str) -> None:
        meta = command["metadata"]
        log.warning("Command %s/%s refused: %s", meta["namespace"], meta["name"], why)
        await events.emit(self.api, command, reason="CommandRefused", message=why, warning=True)
        self.refused += 1
        try:
            await self._delete(command)
        except errors.ApiError as exc:  # refused all the same: nothing was done, the next start refuses it again
            log.warning("Command %s/%s refused but not deleted: %s", meta["namespace"], meta["name"], exc)

    async def _authorize(self, command: Obj, order: bus.Order, target: Obj) -> None:
        """Raise ``ForbiddenError`` unless the Command's recorded author may ``update`` ``target``."""
        bus.same_target(order, target)
        who = bus.author(command)
        review = bus.access_review(order, who)
        answer = await self.api.request("POST", paths.resource(_AUTHZ_API, "subjectaccessreviews"), body=review)
        status = answer.get("status") or {}
        if not status.get("allowed") or status.get("denied"):
            said = f" ({status['reason']})" if status.get("reason") else ""
            raise errors.ForbiddenError(f"{who.username} may not update {order.target}{said}: the Command is refused")

    async def _delete(self, command: Obj) -> bool:
        """Delete ``command``; False when it was gone already (someone else carried it out)."""
        meta = command["metadata"]
        path = paths.resource(defaults.BUS_API, "commands", namespace=meta["namespace"], name=meta["name"])
        try:
            await self.api.request("DELETE", path)
        except errors.ApiError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    async def _job(self, command: Obj, order: bus.Order) -> None:
        path = paths.resource(defaults.BATCH_API, "jobs", namespace=order.namespace, name=order.name)
        delay, deleted = self.retry, False
        while True:
            job = await _get(self.api, path, order.target)
            if not deleted:
                await self._authorize(command, order, job)
            meta = job["metadata"]
            if (meta.get("annotations") or {}).get(names.COMMAND):
                await asyncio.sleep(delay)  # the Job controller has not carried out the last one yet
                delay = min(delay * 2, self.most)
                continue
            if not deleted:
                if not await self._delete(command):
                    return
                deleted = True
            body = {
                "metadata": {"resourceVersion": meta["resourceVersion"], "annotations": {names.COMMAND: order.action}}
            }
            try:
                await self.api.request("PATCH", path, body=body, content_type=client.MERGE)
            except errors.ApiError as exc:
                if exc.status == 409:
                    continue
                raise
            break
        self.carried_out += 1
        job.setdefault("apiVersion", defaults.BATCH_API)
        job.setdefault("kind", "Job")
        await events.emit(self.api, job, reason="CommandIssued", message=ISSUED.format(order.action))

    async def _queue(self, command: Obj, order: bus.Order) -> None:
        queue = await _get(self.api, paths.resource(defaults.QUEUE_API, "queues", name=order.name), order.target)
        await self._authorize(command, order, queue)
        if not await self._delete(command):
            return
        state = await operate_queue(self.api, order.name, order.action)
        self.carried_out += 1
        queue.setdefault("apiVersion", defaults.QUEUE_API)
        queue.setdefault("kind", "Queue")
        await events.emit(self.api, queue, reason=order.action, message=f"queue {order.name} is {state}")
