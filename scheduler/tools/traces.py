"""The trace schema of ``vbridge simulate``, and its validation. Pure.

A trace is one YAML mapping (see ``examples/traces/``)::

    period: 1              # seconds between scheduling cycles (> 0; default 1)
    until: 3600            # stop the clock here (default: when every job finished or nothing can change)
    conf: |                # volcano-scheduler.conf (default: Volcano's defaults)
      actions: "enqueue, allocate, backfill"
    nodes:                 # at least one entry
      - {name: gpu, count: 4, cpu: 32, memory: 128Gi, gpu: 4, pods: 110, labels: {zone: a}}
    queues:                # default: one queue, default, of weight 1
      - {name: research, weight: 2}
    priorityClasses: {high: 1000}
    jobs:                  # at least one; names unique
      - name: train-1      # default: job-<index>
        arrival: 0         # seconds (default 0)
        duration: 120      # seconds each pod runs once bound (required)
        queue: research    # a declared queue (default: default)
        minMember: 4       # default: every pod of the job
        minResources: {cpu: "32"}
        priorityClass: high
        tasks:             # at least one
          - {name: worker, replicas: 4, requests: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "2"}}

:func:`check` refuses every key not listed here (a typo such as ``arival`` is an error, not a
silent default) and every value of the wrong type, with a :class:`TraceError` that names the
field by its ``path`` (``("jobs", 2, "arival")``), so that the command can point at the line.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bridge import errors, quantity
from bridge.models import queue as queue_model
from scheduler import errors as scheduler_errors

__all__ = ["JOB", "NODE", "QUEUE", "TASK", "TOP", "Check", "Path", "TraceError", "check", "where"]

Path = tuple[str | int, ...]
Check = Callable[[Any, Path], None]


class TraceError(scheduler_errors.SchedulerConfigError):
    """A trace field that cannot be used: ``path`` names it; ``key`` when the key itself is wrong."""

    def __init__(self, path: Path, message: str, *, key: bool = False) -> None:
        super().__init__(f"invalid trace: {where(path)}: {message}" if path else f"invalid trace: {message}")
        self.path, self.detail, self.key = path, message, key


def where(path: Path) -> str:
    """``jobs[2].tasks[0].requests``, as the path reads in the file."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _number(*, positive: bool = False) -> Check:
    def check(value: Any, path: Path) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TraceError(path, f"expected a number of seconds, got {value!r}")
        if value < 0 or (positive and value == 0):
            raise TraceError(path, f"must be {'more than' if positive else 'at least'} 0, got {value!r}")

    return check


def _whole(minimum: int, maximum: int | None = None) -> Check:
    def check(value: Any, path: Path) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise TraceError(path, f"expected a whole number of at least {minimum}, got {value!r}")
        if maximum is not None and value > maximum:
            raise TraceError(path, f"expected a whole number of at most {maximum}, got {value!r}")

    return check


def _text(value: Any, path: Path) -> None:
    if not isinstance(value, str) or not value:
        raise TraceError(path, f"expected a non-empty string, got {value!r}")


def _amount(value: Any, path: Path) -> None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise TraceError(path, f"expected a quantity such as 2, 500m or 4Gi, got {value!r}")
    try:
        quantity.parse(value)
    except errors.QuantityError:
        raise TraceError(path, f"expected a quantity such as 2, 500m or 4Gi, got {value!r}") from None


def _mapping_of(check_value: Check) -> Check:
    def check(value: Any, path: Path) -> None:
        if not isinstance(value, Mapping):
            raise TraceError(path, f"expected a mapping, got {value!r}")
        for key, item in value.items():
            _text(key, (*path, str(key)))
            check_value(item, (*path, str(key)))

    return check


def _list_of(fields: Mapping[str, tuple[Check, bool]], *, least: int = 0) -> Check:
    def check(value: Any, path: Path) -> None:
        if not isinstance(value, list) or len(value) < least:
            raise TraceError(path, f"expected a list of at least {least} mapping(s), got {value!r}")
        for index, item in enumerate(value):
            _fields(item, (*path, index), fields)

    return check


def _fields(value: Any, path: Path, fields: Mapping[str, tuple[Check, bool]]) -> None:
    if not isinstance(value, Mapping):
        raise TraceError(path, f"expected a mapping of {', '.join(fields)}, got {value!r}")
    for key in value:
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TraceError((*path, str(key)), f"unknown key{hint} (known: {', '.join(fields)})", key=True)
    for key, (check_value, required) in fields.items():
        if key in value:
            check_value(value[key], (*path, key))
        elif required:
            raise TraceError(path, f"{key!r} is required")


_ANY_TEXT = _mapping_of(_text)
_REQUESTS = _mapping_of(_amount)
TASK: dict[str, tuple[Check, bool]] = {
    "name": (_text, False),
    "replicas": (_whole(1), False),
    "requests": (_REQUESTS, True),
}
JOB: dict[str, tuple[Check, bool]] = {
    "name": (_text, False),
    "arrival": (_number(), False),
    "duration": (_number(), True),
    "queue": (_text, False),
    "tasks": (_list_of(TASK, least=1), True),
    "minMember": (_whole(0), False),
    "minResources": (_REQUESTS, False),
    "priorityClass": (_text, False),
}
NODE: dict[str, tuple[Check, bool]] = {
    "name": (_text, True),
    "count": (_whole(1), False),
    "cpu": (_amount, False),
    "memory": (_amount, False),
    "pods": (_whole(1), False),
    "gpu": (_whole(0), False),
    "labels": (_ANY_TEXT, False),
}
# A queue's weight by the Queue's rule (``bridge.models.queue``), as the cluster would take it.
QUEUE: dict[str, tuple[Check, bool]] = {
    "name": (_text, True),
    "weight": (_whole(queue_model.WEIGHT.low, queue_model.WEIGHT.high), False),
}
TOP: dict[str, tuple[Check, bool]] = {
    "period": (_number(positive=True), False),
    "until": (_number(), False),
    "conf": (_text, False),
    "nodes": (_list_of(NODE, least=1), True),
    "queues": (_list_of(QUEUE), False),
    "priorityClasses": (_mapping_of(_whole(-(2**31))), False),
    "jobs": (_list_of(JOB, least=1), True),
}


def check(doc: Any) -> None:
    """Raise :class:`TraceError` for the first field of ``doc`` the schema above does not allow."""
    _fields(doc, (), TOP)
    _unique([j.get("name", f"job-{i}") for i, j in enumerate(doc["jobs"])], "jobs")
    declared = {q["name"] for q in doc.get("queues") or []} or {"default"}
    for i, job in enumerate(doc["jobs"]):
        if job.get("queue", "default") not in declared:
            raise TraceError(("jobs", i, "queue"), f"queue {job.get('queue', 'default')!r} is not declared in queues")


def _unique(names: Sequence[object], section: str) -> None:
    seen: set[object] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise TraceError((section, i, "name"), f"{name!r} is used twice; job names in a trace must be unique")
        seen.add(name)
