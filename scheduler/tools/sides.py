"""Which side a group waits on under the native backend: our queue gate or kube-scheduler. Pure.

On the native backend (``config.backend``) our cycle only admits; kube-scheduler places the
pods once we lift the queue gate. ``attribute(exp, native_condition)`` returns the explanation
with ``side`` and ``verdict`` saying so:

- ``queue-gate``: the group is not admitted (the verdict names who refuses: the queue's
  deserved share or capability, a closed queue, minResources against the cluster capacity ×
  overcommit), or cannot be scheduled at all; its pods keep ``keys.QUEUE_GATE``;
- ``kube-scheduler``: admitted, pods still unplaced; the verdict quotes the native PodGroup's
  ``PodGroupInitiallyScheduled`` condition (``native_condition``: the dict read from the
  apiserver, None when kube-scheduler has not written it yet);
- ``""``: nothing waits (minMember is met);
- ``native-refused``: the apiserver refused to create the group's native twin (the Volcano
  PodGroup's condition ``keys.NATIVE_SYNCED``, written by the native reconciler, handed in as
  ``native_condition``): kube-scheduler never sees the group, whatever our queue decides.

On the Volcano backend the explanation is returned as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from bridge import defaults, keys
from scheduler.framework import config
from scheduler.tools import explain

__all__ = ["GATE", "KUBE", "REFUSED", "attribute"]

GATE = "queue-gate"
KUBE = "kube-scheduler"
REFUSED = "native-refused"
_OURS = ("not-admitted", "never", "invalid", "no-queue")


def attribute(
    exp: explain.Explanation, conf: config.SchedulerConfig, native_condition: Mapping[str, Any] | None
) -> explain.Explanation:
    if conf.backend != defaults.NATIVE:
        return exp
    if native_condition is not None and native_condition.get("type") == keys.NATIVE_SYNCED:
        said = str(native_condition.get("message", ""))
        verdict = f"kube-scheduler cannot place it: {said}; our queue: {exp.verdict}"
        return dataclasses.replace(exp, side=REFUSED, verdict=verdict, native_condition=_triple(native_condition))
    if exp.state in _OURS or (exp.state == "no-pods" and exp.next_phase == "Pending"):
        return dataclasses.replace(exp, side=GATE, verdict=f"waits on our queue gate: {exp.verdict}")
    if exp.state in ("running",) or (exp.state != "no-pods" and exp.needed == 0):
        return dataclasses.replace(exp, side="", native_condition=_triple(native_condition))
    triple = _triple(native_condition)
    if triple is None:
        said = "kube-scheduler has not reported on the native PodGroup yet"
    else:
        status, reason, message = triple
        said = f"native PodGroup PodGroupInitiallyScheduled={status} {reason}: {message}".rstrip(": ")
    verdict = f"waits on kube-scheduler (admitted by queue {exp.queue.name}, queue gate lifted): {said}"
    return dataclasses.replace(exp, side=KUBE, verdict=verdict, native_condition=triple)


def _triple(condition: Mapping[str, Any] | None) -> tuple[str, str, str] | None:
    if condition is None:
        return None
    return (str(condition.get("status", "")), str(condition.get("reason", "")), str(condition.get("message", "")))
