"""The stages of a group, as its ``keys.STAGES`` annotation carries them. Pure.

A workload whose pods arrive in stages (a JobSet: ``bridge.adapters.jobset.stages`` decides
them) writes its stages on its PodGroup; the scheduler (``scheduler.api.building``: each later
stage placed whole, its room held) and the native backend (``bridge.native.workloads``: one
``podGroupTemplate`` per stage) read them back. This module is the one home of the format:
JSON, first stage first, each ``{"tasks": {task: pods}, "after": what releases it}``.

``encode(stages)`` writes it; ``decode(raw)`` reads it, and answers none for anything it cannot
read (not JSON, a stage without tasks, a count that is not a whole number ≥ 0): a group is then
one stage, as if it had no annotation.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["Stage", "decode", "encode"]


@dataclasses.dataclass(frozen=True)
class Stage:
    """Pods that exist together: per task (``volcano.sh/task-spec``) how many, and what releases them."""

    tasks: tuple[tuple[str, int], ...]  # (task, pods); ``decode`` gives them sorted by task name
    after: str = ""  # "" for the first stage; else e.g. "node Ready"

    @property
    def pods(self) -> int:
        return sum(n for _, n in self.tasks)


def encode(stages: Iterable[tuple[Mapping[str, int], str]]) -> str:
    """``stages``: (pods per task, what releases it), first stage first."""
    return json.dumps([{"tasks": dict(tasks), "after": after} for tasks, after in stages], separators=(",", ":"))


def _stage(raw: Any) -> Stage:
    tasks = raw["tasks"]
    if not isinstance(tasks, dict) or not tasks:
        raise ValueError("a stage without tasks")
    counted = []
    for task, n in sorted(tasks.items()):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"{task}: {n!r} pods")
        counted.append((str(task), n))
    after = raw.get("after", "")
    return Stage(tasks=tuple(counted), after=after if isinstance(after, str) else "")


def decode(raw: object) -> tuple[Stage, ...]:
    """The stages of an annotation value; none when it cannot be read."""
    return _decoded(raw) if isinstance(raw, str) else ()


@functools.lru_cache(maxsize=4096)
def _decoded(raw: str) -> tuple[Stage, ...]:
    """``decode`` of one value, once: the scheduler reads every staged group's annotation each cycle."""
    try:
        parsed = json.loads(raw)
        if not isinstance(parsed, list):
            return ()
        return tuple(_stage(stage) for stage in parsed)
    except (ValueError, TypeError, KeyError, AttributeError):
        return ()
