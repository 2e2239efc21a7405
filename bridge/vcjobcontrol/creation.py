"""Pods that could not be created: the Event, the status note and when to try again. Pure.

Volcano records a Warning ``FailedCreatePod`` Event ("Error creating pods: [...]") and requeues
the job with a growing delay. Here the apiserver's message goes into that Event and into
``status.state`` (reason ``FailedCreatePod``, the phase kept, so ``kubectl get vcjob`` shows
why a job stays Pending), both saying when the next attempt is; :func:`retry_after` says when:
a refusal (4xx other than 409 and 429: an invalid template, a missing PriorityClass, a quota)
or no answer at all (a timeout: a template the apiserver chokes on) waits longer than a fault
(5xx), both doubling per failed attempt of the job up to
``bridge.defaults.VCJOB_CREATE_RETRY_MOST``. Nothing is tried again unchanged at once, and the
controller tries nothing for a job that is gone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from bridge import defaults

__all__ = ["REASON", "Failure", "cleared", "message", "noted", "retry_after"]

REASON = "FailedCreatePod"  # Volcano's event reason
_SHOWN = 3  # failures named in a message; the rest are counted


@dataclasses.dataclass(frozen=True)
class Failure:
    pod: str
    status: int  # the apiserver's HTTP status; 0 when none answered (a timeout, a dropped connection)
    message: str

    @property
    def refused(self) -> bool:
        """The apiserver refused the pod itself (4xx): trying again at once changes nothing."""
        return 400 <= self.status < 500 and self.status not in (409, 429)

    @property
    def unanswered(self) -> bool:
        """No answer (a timeout, a dropped connection): the apiserver may be choking on this pod."""
        return self.status == 0


def message(failures: Sequence[Failure], retry_in: float | None = None) -> str:
    """``Error creating pods: [...]`` as Volcano words it, naming the first few; with ``retry_in``,
    when the next attempt is."""
    shown = [f"failed to create pod {f.pod}, err: {f.message}" for f in failures[:_SHOWN]]
    more = f" and {len(failures) - _SHOWN} more" if len(failures) > _SHOWN else ""
    then = f"; next attempt in {retry_in:.0f} s" if retry_in is not None else ""
    return f"Error creating pods: [{'; '.join(shown)}]{more}{then}"


def noted(status: Mapping[str, Any], failures: Sequence[Failure], retry_in: float | None = None) -> dict[str, Any]:
    """``status`` with the failure in ``state`` (reason FailedCreatePod); the phase is kept."""
    state = {**(status.get("state") or {}), "reason": REASON, "message": message(failures, retry_in)}
    return {**status, "state": state}


def cleared(status: Mapping[str, Any]) -> dict[str, Any]:
    """``status`` without a FailedCreatePod note (the pods asked for since were all made)."""
    state = dict(status.get("state") or {})
    if state.get("reason") == REASON:
        state = {k: v for k, v in state.items() if k not in ("reason", "message")}
    return {**status, "state": state}


def retry_after(attempt: int, failures: Sequence[Failure]) -> float:
    """Seconds before attempt ``attempt + 1`` (``attempt`` ≥ 1 failed ones so far)."""
    slow = any(f.refused or f.unanswered for f in failures)
    first = defaults.VCJOB_CREATE_RETRY_CLIENT if slow else defaults.VCJOB_CREATE_RETRY_FIRST
    return float(min(first * 2 ** max(attempt - 1, 0), defaults.VCJOB_CREATE_RETRY_MOST))
