"""conformance: never evict kube-system pods or pods of a system-*-critical PriorityClass."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler import snapshot
from scheduler.plugins import base

__all__ = ["Conformance"]


class Conformance(base.Plugin):
    name = "conformance"

    def victims(
        self, preemptor: snapshot.Task, candidates: Sequence[snapshot.Task], *, action: str
    ) -> list[snapshot.Task]:
        return [task for task in candidates if not task.critical]
