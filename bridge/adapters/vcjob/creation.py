"""Pods that could not be created: the Event, the status note and when to try again. Pure.

Volcano records a Warning ``FailedCreatePod`` Event ("Error creating pods: [...]") and requeues
the job with a growing delay. Here the apiserver's message goes into that Event and into
``status.state`` (reason ``FailedCreatePod``, the phase kept, so ``kubectl get vcjob`` shows
why a job stays Pending); :func:`retry_after` says when to try again: a refusal (4xx: an
invalid template, a missing PriorityClass) waits longer than a fault (5xx, a timeout), both
doubling up to ``bridge.defaults.VCJOB_CREATE_RETRY_MOST``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from bridge import defaults

__all__ = ["REASON", "Failure", "message", "noted", "retry_after"]

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
        return 400 <= self.status < 500 and self.status != 429


def message(failures: Sequence[Failure]) -> str:
    """``Error creating pods: [...]`` as Volcano words it, naming the first few."""
    shown = [f"failed to create pod {f.pod}, err: {f.message}" for f in failures[:_SHOWN]]
    more = f" and {len(failures) - _SHOWN} more" if len(failures) > _SHOWN else ""
    return f"Error creating pods: [{'; '.join(shown)}]{more}"


def noted(status: Mapping[str, Any], failures: Sequence[Failure]) -> dict[str, Any]:
    """``status`` with the failure in ``state`` (reason FailedCreatePod); the phase is kept."""
    state = {**(status.get("state") or {}), "reason": REASON, "message": message(failures)}
    return {**status, "state": state}


def retry_after(attempt: int, failures: Sequence[Failure]) -> float:
    """Seconds before attempt ``attempt + 1`` (``attempt`` ≥ 1 failed ones so far)."""
    first = (
        defaults.VCJOB_CREATE_RETRY_CLIENT if any(f.refused for f in failures) else defaults.VCJOB_CREATE_RETRY_FIRST
    )
    return float(min(first * 2 ** max(attempt - 1, 0), defaults.VCJOB_CREATE_RETRY_MOST))
