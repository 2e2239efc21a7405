"""The immutable input of one scheduling cycle: nodes, tasks (pods), jobs (PodGroups), queues.

Built from API dicts by :mod:`scheduler.api.building`; never mutated afterwards. Node capacity is
also kept as read-only ``nodes × dims`` numpy arrays so a cycle can copy them in one go and
vectorise feasibility and scoring over every node.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.api import podspec, resources

if TYPE_CHECKING:
    from scheduler.api import tally

__all__ = ["OCCUPYING", "READY", "Job", "Matrix", "Node", "Queue", "Snapshot", "Stranded", "Task", "TaskStatus"]

Matrix = npt.NDArray[np.float64]


class TaskStatus(enum.Enum):
    PENDING = "Pending"  # no node yet
    BOUND = "Bound"  # has a node, not running yet
    RUNNING = "Running"
    RELEASING = "Releasing"  # being deleted while still on a node
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    # Only inside a session:
    ALLOCATED = "Allocated"
    PIPELINED = "Pipelined"


# Statuses whose pod holds node resources.
OCCUPYING: frozenset[TaskStatus] = frozenset(
    {TaskStatus.BOUND, TaskStatus.RUNNING, TaskStatus.RELEASING, TaskStatus.ALLOCATED}
)
# Statuses gang counts as ready (Volcano: Bound, Binding, Running, Allocated, Succeeded).
READY: frozenset[TaskStatus] = frozenset(
    {TaskStatus.BOUND, TaskStatus.RUNNING, TaskStatus.ALLOCATED, TaskStatus.SUCCEEDED}
)


@dataclasses.dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str]
    taints: tuple[podspec.Taint, ...]
    unschedulable: bool
    ready: bool
    allocatable: resources.Resource


@dataclasses.dataclass(frozen=True, slots=True)
class Task:
    """One of our pods that belongs to a job."""

    key: str  # namespace/name
    uid: str
    namespace: str
    name: str
    job: str  # namespace/group-name
    task_name: str  # volcano.sh/task-spec, "" when absent
    status: TaskStatus
    node: str | None
    request: resources.Resource
    best_effort: bool
    priority: int
    preemptable: bool
    critical: bool  # kube-system or system-*-critical: never evicted
    labels: Mapping[str, str]
    placement: podspec.Placement
    shape: int  # equal (request, placement), equal number: a cheap key for "placed alike"
    spark_role: str | None
    created: str
    started: datetime.datetime | None
    # The pod carries our queue gate (``keys.QUEUE_GATE``, native backend): kube-scheduler does
    # not place it until the cycle that admits its group lifts the gate (``actions.ungate``).
    gated: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class Job:
    """A PodGroup and its tasks."""

    key: str  # namespace/name
    uid: str
    namespace: str
    name: str
    queue: str
    min_member: int
    min_task_member: Mapping[str, int]
    min_resources: resources.Resource | None
    priority: int
    phase: str
    created: str
    tasks: tuple[str, ...]  # by creation
    by_priority: tuple[Task, ...]  # the tasks in Volcano's task order: higher priority first, then creation
    spark: bool
    owner: tuple[str, str] | None = None  # (kind, name) of its controller ownerReference, else its first
    # (reason, message) when the group must not be scheduled at all: its spec is unsound, its
    # queue is, or its queue does not admit its namespace (``building``). Its verdict says why.
    held: tuple[str, str] | None = None
    # Its stages, first to last, each its pods per task name (the group's ``vbridge.io/stages``, a
    # JobSet's); empty for a group that is one stage. The first stage is the gang (minMember); each
    # later one is placed whole once its pods begin to arrive (``plugins.gang``), and its room is
    # held from the moment the first runs (``plugins.stages``).
    stages: tuple[tuple[tuple[str, int], ...], ...] = ()

    @property
    def later(self) -> int:
        """How many pods the stages after the first bring."""
        return sum(n for stage in self.stages[1:] for _, n in stage)


@dataclasses.dataclass(frozen=True, slots=True)
class Queue:
    name: str
    weight: int
    capability: resources.Resource | None
    guarantee: resources.Resource
    deserved: resources.Resource | None
    reclaimable: bool
    state: str  # Open | Closed | Closing | Unknown
    priority: int
    created: str
    parent: str | None = None  # spec.parent: its place in the queue tree (``api.queuetree``)
    hierarchy: str | None = None  # Volcano's older form: the annotation volcano.sh/hierarchy ("root/eng/prod")
    hierarchy_weights: str | None = None  # ... and volcano.sh/hierarchy-weights ("1/2/8")
    allowed: tuple[str, ...] = ()  # namespace patterns of vbridge.io/allowed-namespaces; empty: every one
    unsound: str = ""  # why its spec cannot be used ("": it can); its groups are held


@dataclasses.dataclass(frozen=True, slots=True)
class Stranded:
    """A pod of ours the core cannot consider, with the reason (missing group or annotation)."""

    key: str
    reason: str
    message: str


@dataclasses.dataclass(frozen=True, slots=True)
class Snapshot:
    nodes: tuple[Node, ...]  # sorted by name; row i of the matrices is nodes[i]
    dims: tuple[str, ...]  # column order of the matrices: cpu, memory, pods, then scalars
    allocatable: Matrix
    used: Matrix  # requests of every pod on the node (any scheduler), including releasing ones
    releasing: Matrix  # requests of pods being deleted
    tasks: Mapping[str, Task]
    jobs: Mapping[str, Job]
    queues: Mapping[str, Queue]
    placed_labels: tuple[tuple[int, str, Mapping[str, str], bool], ...]  # (node row, namespace, labels, deleting)
    placed_terms: tuple[tuple[int, podspec.Placement], ...]  # (node row, placement) of those with pod terms
    stranded: tuple[Stranded, ...]
    columns: tally.Tally  # the tasks as arrays, for counting per job in bulk

    @property
    def node_index(self) -> dict[str, int]:
        return {node.name: i for i, node in enumerate(self.nodes)}
