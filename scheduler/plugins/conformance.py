"""conformance: never evict kube-system pods or pods of a system-*-critical PriorityClass."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.api import snapshot
from scheduler.framework import plugin

__all__ = ["Conformance"]


class Conformance(plugin.Plugin):
    name = "conformance"

    def victims(
        self, preemptor: snapshot.Task, candidates: Sequence[snapshot.Task], *, action: str
    ) -> list[snapshot.Task]:
        return [task for task in candidates if not task.critical]
