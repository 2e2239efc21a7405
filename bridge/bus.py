"""``bus.volcano.sh/v1alpha1`` Commands: what one asks of which object, and the queue states it
leads to. Pure.

vcctl's write verbs post a Command (``vcctl job suspend`` → ``AbortJob``, ``job resume`` →
``ResumeJob``, ``queue operate -a open|close`` → ``OpenQueue``/``CloseQueue``) whose ``target``,
also its controller ownerReference, is a Job (``batch.volcano.sh/v1alpha1``, in the Command's
namespace) or a Queue (``scheduling.volcano.sh/v1beta1``; vcctl files those in ``default``).
Volcano's controllers delete a Command before they act, so it is carried out at most once.

:func:`order` reads a Command into an :class:`Order`, or raises ``InvalidObjectError`` with the
reason (no target, a kind no controller serves, an action the target has not). A Job's action
goes the way of the ``vbridge.io/job-command`` annotation (one path for both);
:func:`queue_state` is Volcano's queue state machine (``pkg/controllers/queue/state``): a
queue closed while it still has PodGroups is ``Closing`` until they are gone, then ``Closed``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from bridge import defaults, errors

__all__ = ["JOB_ACTIONS", "QUEUE_ACTIONS", "SYNC_QUEUE", "Order", "order", "queue_state"]

# The Job actions a Command may carry (Volcano's bus actions that need no further argument).
JOB_ACTIONS = ("AbortJob", "ResumeJob", "RestartJob", "TerminateJob", "CompleteJob")
QUEUE_ACTIONS = ("OpenQueue", "CloseQueue")
SYNC_QUEUE = "SyncQueue"  # no command: the queue's PodGroups changed
_TARGETS = {
    ("Job", defaults.BATCH_API): JOB_ACTIONS,
    ("Queue", defaults.QUEUE_API): QUEUE_ACTIONS,
}


@dataclasses.dataclass(frozen=True)
class Order:
    kind: Literal["Job", "Queue"]
    namespace: str  # the Job's (the Command's own); "" for a Queue
    name: str
    action: str

    @property
    def target(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def order(command: Mapping[str, Any]) -> Order:
    """What ``command`` asks; ``InvalidObjectError`` when no controller here can carry it out."""
    target = command.get("target") or {}
    action = str(command.get("action") or "")
    if not isinstance(target, Mapping) or not target.get("name") or not target.get("kind"):
        raise errors.InvalidObjectError("the Command has no target (an ownerReference with kind and name)")
    kind, api_version, name = str(target["kind"]), str(target.get("apiVersion") or ""), str(target["name"])
    actions = _TARGETS.get((kind, api_version))
    if actions is None:
        served = ", ".join(f"{k} {v}" for k, v in _TARGETS)
        raise errors.InvalidObjectError(f"target {kind} {api_version} {name}: no controller here serves it ({served})")
    if action not in actions:
        shown = action or "(none)"
        raise errors.InvalidObjectError(f"action {shown} is not one a {kind} takes: {', '.join(actions)}")
    namespace = str((command.get("metadata") or {}).get("namespace") or "") if kind == "Job" else ""
    return Order("Job" if kind == "Job" else "Queue", namespace, name, action)


def queue_state(state: str | None, action: str, groups: int) -> str:
    """A queue's state after ``action`` (``OpenQueue``, ``CloseQueue`` or ``SyncQueue``) when it
    has ``groups`` PodGroups, as Volcano's queue controller moves it."""
    current = state or "Open"
    if action == "OpenQueue":
        return "Open"
    if action == "CloseQueue":
        return "Closed" if current == "Closed" or not groups else "Closing"
    if current == "Closing" and not groups:
        return "Closed"
    return current
