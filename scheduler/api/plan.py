"""The output of one cycle: operations to carry out and verdicts to write. Pure values.

``operations`` is ordered as the committed Statements were: the binder carries them out in
that order. ``Allocate`` binds a pod; ``Pipeline`` nominates a node whose resources are being
released (set ``status.nominatedNodeName``, bind in a later cycle); ``Evict`` deletes a victim;
``Ungate`` (native backend) removes our queue gate from a pod whose group its queue admitted, so
kube-scheduler may place it.
Verdicts are desired status, computed fresh each cycle; the I/O layer diffs and writes them.

The two records made once per pod, ``Allocate`` and ``PodVerdict``, are named tuples: a big
cycle makes a hundred thousand of them, and a tuple of strings is built several times faster
than a frozen dataclass and is dropped from the garbage collector's watch after its first
pass. The rest are frozen dataclasses. Either way they are immutable values read by name.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping

__all__ = [
    "Allocate",
    "Condition",
    "Evict",
    "Invalid",
    "Operation",
    "Pipeline",
    "Plan",
    "PodGroupVerdict",
    "PodVerdict",
    "QueueVerdict",
    "Ungate",
]


class Allocate(typing.NamedTuple):
    pod: str  # namespace/name
    uid: str
    node: str


@dataclasses.dataclass(frozen=True, slots=True)
class Pipeline:
    pod: str
    uid: str
    node: str


@dataclasses.dataclass(frozen=True, slots=True)
class Evict:
    pod: str
    uid: str
    node: str
    reason: str  # Preempted | Reclaimed
    message: str


@dataclasses.dataclass(frozen=True, slots=True)
class Ungate:
    pod: str
    uid: str
    gate: str  # the scheduling gate's name (``keys.QUEUE_GATE``)
    group: str  # namespace/name of the PodGroup admitted


Operation = Allocate | Pipeline | Evict | Ungate


@dataclasses.dataclass(frozen=True, slots=True)
class Condition:
    type: str  # Unschedulable | Scheduled
    status: str  # "True" | "False"
    reason: str
    message: str


@dataclasses.dataclass(frozen=True, slots=True)
class Invalid:
    """Why a job cannot be scheduled at all (gang's JobValid); becomes an Unschedulable condition."""

    reason: str  # NotEnoughTasks | NotEnoughPodsOfTask
    message: str


@dataclasses.dataclass(frozen=True, slots=True)
class PodGroupVerdict:
    key: str  # namespace/name
    phase: str  # Pending | Inqueue | Running | Unknown | Completed
    conditions: tuple[Condition, ...]
    running: int
    succeeded: int
    failed: int


@dataclasses.dataclass(frozen=True, slots=True)
class QueueVerdict:
    name: str
    state: str  # Open | Closed | Closing | Unknown
    pending: int
    inqueue: int
    running: int
    unknown: int
    completed: int
    allocated: Mapping[str, str]  # ResourceList of what the queue's pods hold


class PodVerdict(typing.NamedTuple):
    """An event for a pod; unless ``reason`` is Scheduled, also PodScheduled=False/Unschedulable."""

    pod: str
    event_type: str  # Normal | Warning
    reason: str  # Scheduled | FailedScheduling | Unschedulable
    message: str
    # The reason of its group's Unschedulable condition (NotEnoughTasks, NotEnoughResources, ...),
    # "" without one. With ``reason``, what the pod is told changes only when one of them does:
    # the status writer writes its condition and Event once per change of these, not per message.
    cause: str = ""

    @property
    def condition(self) -> Condition | None:
        if self.reason == "Scheduled":
            return None
        return Condition("PodScheduled", "False", "Unschedulable", self.message)


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    operations: tuple[Operation, ...]
    podgroups: tuple[PodGroupVerdict, ...]
    queues: tuple[QueueVerdict, ...]
    pods: tuple[PodVerdict, ...]
    # The PodGroups the cycle could not schedule and that hold nothing from it (no operation, no
    # room kept for a pipelined gang, no eviction on their behalf): the I/O shell may park them
    # (``scheduler.io.parking``), which changes no other decision.
    stuck: frozenset[str] = frozenset()

    def binds(self) -> dict[str, str]:
        return {op.pod: op.node for op in self.operations if isinstance(op, Allocate)}

    def evictions(self) -> tuple[str, ...]:
        return tuple(op.pod for op in self.operations if isinstance(op, Evict))

    def ungated(self) -> tuple[str, ...]:
        return tuple(op.pod for op in self.operations if isinstance(op, Ungate))

    def pipelined(self) -> dict[str, str]:
        return {op.pod: op.node for op in self.operations if isinstance(op, Pipeline)}

    def podgroup(self, key: str) -> PodGroupVerdict:
        return next(v for v in self.podgroups if v.key == key)
