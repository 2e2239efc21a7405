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

Authority (Volcano asks none): a Command acts only on a target its author may ``update``.
Admission writes the author (the request's userInfo, :func:`record`) into the
``vbridge.io/command-author`` annotation on CREATE and refuses an UPDATE that changes it, the
action or the target (:func:`unchanged`); the controller reads it back (:func:`author`: a
Command without one, made while the webhook was down, is refused) and asks the apiserver a
SubjectAccessReview (:func:`access_review`): ``update`` on ``queues`` (scheduling.volcano.sh,
cluster-scoped) for a Queue, on ``jobs`` (batch.volcano.sh) in the Command's namespace for a Job.
A target in another namespace, or one whose uid is not the object found (:func:`same_target`),
is refused outright. Refusals raise ``errors.ForbiddenError``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any, Literal

from bridge import defaults, errors, keys

__all__ = [
    "JOB_ACTIONS",
    "QUEUE_ACTIONS",
    "SYNC_QUEUE",
    "Author",
    "Order",
    "access_review",
    "author",
    "order",
    "queue_state",
    "record",
    "same_target",
    "unchanged",
]

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
    uid: str = ""  # the target's uid, when the Command names one

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
    own = str((command.get("metadata") or {}).get("namespace") or "")
    elsewhere = target.get("namespace")
    if kind == "Job" and elsewhere not in (None, "", own):
        raise errors.ForbiddenError(
            f"target Job {elsewhere}/{name} is in another namespace: a Command acts only on Jobs in its own ({own})"
        )
    namespace = own if kind == "Job" else ""
    return Order("Job" if kind == "Job" else "Queue", namespace, name, action, str(target.get("uid") or ""))


def same_target(order: Order, found: Mapping[str, Any]) -> None:
    """Raise ``ForbiddenError`` when the Command names a uid that is not ``found``'s (the object of
    that name in the Command's namespace): an ownerReference to another namespace's object."""
    uid = str((found.get("metadata") or {}).get("uid") or "")
    if order.uid and uid and order.uid != uid:
        raise errors.ForbiddenError(
            f"target uid {order.uid} is not {order.target} (uid {uid}): a Command acts only on its own "
            "namespace's objects"
        )


@dataclasses.dataclass(frozen=True)
class Author:
    """Who made a Command: the userInfo admission recorded."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _author(user: Any) -> Author | None:
    if not isinstance(user, Mapping) or not isinstance(user.get("username"), str) or not user["username"]:
        return None
    extra = user.get("extra")
    return Author(
        username=user["username"],
        uid=str(user.get("uid") or ""),
        groups=_strings(user.get("groups")),
        extra={str(k): _strings(v) for k, v in extra.items()} if isinstance(extra, Mapping) else {},
    )


def record(user: Any) -> str:
    """The ``vbridge.io/command-author`` value for a request's ``userInfo``: JSON, keys sorted."""
    found = _author(user)
    if found is None:
        raise errors.InvalidObjectError("the request names no user (userInfo.username): a Command needs an author")
    body = {
        "username": found.username,
        "uid": found.uid,
        "groups": list(found.groups),
        "extra": {k: list(v) for k, v in sorted(found.extra.items())},
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def _recorded(obj: Mapping[str, Any]) -> Any:
    """The ``vbridge.io/command-author`` annotation of ``obj`` as it is (None: absent)."""
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return annotations.get(keys.COMMAND_AUTHOR) if isinstance(annotations, Mapping) else None


def author(command: Mapping[str, Any]) -> Author:
    """The recorded author of ``command``; ``ForbiddenError`` when there is none (made while our
    webhook was down, or in a namespace it skips) or it cannot be read."""
    raw = _recorded(command)
    try:
        found = _author(json.loads(raw)) if isinstance(raw, str) else None
    except ValueError:
        found = None
    if found is None:
        raise errors.ForbiddenError(
            f"the Command has no author recorded by admission ({keys.COMMAND_AUTHOR}): it was made while the "
            "volcano-bridge webhook was down or skipped it; make it again"
        )
    return found


def unchanged(old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Raise ``ForbiddenError`` when an UPDATE changes a Command's author, action or target: a
    Command is one request, judged for the one who made it."""

    if _recorded(old) != _recorded(new):
        raise errors.ForbiddenError(f"{keys.COMMAND_AUTHOR} is written by admission and cannot be changed")
    for field in ("action", "target"):
        if old.get(field) != new.get(field):
            raise errors.ForbiddenError(f"a Command's {field} cannot be changed: make a new Command")


def access_review(order: Order, who: Author) -> dict[str, Any]:
    """The SubjectAccessReview (authorization.k8s.io/v1) asking whether ``who`` may ``update`` the target."""
    if order.kind == "Queue":
        attributes = {"group": defaults.QUEUE_API.split("/")[0], "resource": "queues", "name": order.name}
    else:
        attributes = {
            "group": defaults.BATCH_API.split("/")[0],
            "resource": "jobs",
            "namespace": order.namespace,
            "name": order.name,
        }
    spec: dict[str, Any] = {"user": who.username, "resourceAttributes": {"verb": "update", **attributes}}
    if who.uid:
        spec["uid"] = who.uid
    if who.groups:
        spec["groups"] = list(who.groups)
    if who.extra:
        spec["extra"] = {k: list(v) for k, v in who.extra.items()}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


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
