"""The plugin interface: typed hooks that return values; ``None`` means "no opinion".

A plugin object lives for one cycle and reads the session; it never writes status and never
changes session state (only statements do), with one exception: ``on_session_open``, Volcano's
OnSessionOpen, called once the session and every plugin are built, may set up what the
session keeps for the whole cycle through the session's own set-up methods (the Spark hold
calls ``Session.hold``). Node hooks take an index array ``rows`` and must
answer for exactly those rows, looking only at each row's own state: the placement cache
relies on this to refresh just the rows that changed.

Batched placement (``placement.Placer.place_many``) places a gang's identical pods in one go,
so two more rules hold: ``node_score(task, rows, extra)`` scores each row as if ``extra[i]``
more copies of the task already sat on ``rows[i]`` (from the row's idle resources, which is
all a copy changes), and ``predicate`` and ``node_score`` never depend on pods placed this
cycle. What does (pod affinity, anti-affinity, topology spread: a pod placed on one row changes
every row of its topology domain) goes in the domain hooks instead: a task for which some
plugin's ``topological`` is true is placed one at a time, and each time ``domain_predicate``
and ``domain_score`` answer over every row, from the session's ``topology`` counts (two kinds of
run skip them, relying on kube-scheduler's semantics for pod affinity and anti-affinity:
``framework.apart``, ``framework.together``). A plugin
that overrides ``allocatable`` must also override ``allocatable_count``; until it does, its
queues simply take the one-by-one path.

Two class attributes tell ``actions.allocate`` how a plugin's answers move: ``shared_queue_order``
(a queue's order key also changes when other queues allocate, as in a queue tree, so every key
is recomputed each turn) and ``interleaves`` (a ready job yields its turn after each further
task, as Volcano's allocate does, so queues take turns pod by pod; for plugins whose
``allocatable`` lets a queue go past its share).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from scheduler.api import plan, snapshot
from scheduler.framework import config, counted, scored

if TYPE_CHECKING:
    from scheduler.framework import session

__all__ = ["GANG_LEVEL", "PREEMPTS", "RECLAIMS", "Counts", "Invalid", "Mask", "Plugin", "Rows", "Scores"]

# The ``action`` a ``victims`` hook is asked for: preempt-like (same queue, by priority) or
# reclaim-like (across queues, by share); the gang-level ones (Volcano's gangpreempt and
# gangreclaim) choose victims per job themselves, so gang permits every candidate for them.
PREEMPTS = ("preempt", "gangpreempt")
RECLAIMS = ("reclaim", "gangreclaim")
GANG_LEVEL = ("gangpreempt", "gangreclaim")

Rows = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]
Scores = npt.NDArray[np.float64]
Counts = npt.NDArray[np.float64]  # copies per row, as floats: they scale resource vectors


Invalid = plan.Invalid  # why a job cannot be scheduled at all (gang's JobValid)


class Plugin:
    # A class variable, not an instance default: ``registry`` reads it off the class (and a
    # compiled build, mypyc, makes unannotated class attributes per-instance slots).
    name: ClassVar[str] = ""
    shared_queue_order = False
    interleaves = False
    # Volcano switches (``config.ENABLE_KEYS``) this plugin does not carry out when on, with why:
    # ``scheduler.configure`` refuses a conf that turns one on, naming the plugin and the switch.
    refused: ClassVar[Mapping[str, str]] = {}

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        self.option = option
        self.session = ssn

    def on_session_open(self) -> None:
        """Set-up once every plugin of the session is built (see the module docstring)."""
        return None

    def job_valid(self, job: str) -> Invalid | None:
        return None

    def job_ready(self, job: str) -> bool | None:
        return None

    def job_pipelined(self, job: str) -> bool | None:
        return None

    def job_order(self, job: str) -> tuple[Any, ...] | None:
        """A sort key; keys are compared in tier order, so the first plugin that differs wins."""
        return None

    def queue_order(self, queue: str) -> tuple[Any, ...] | None:
        """A sort key that may change only when the queue's own allocation does: allocate keeps
        each queue's key and recomputes it after that queue's turn only."""
        return None

    def predicate(self, task: snapshot.Task, rows: Rows) -> list[tuple[str, Mask]]:
        """(reason, passes) per check, for the given rows. With ``node_score``, answers from the
        task's request and node selection only (nodeSelector, node affinity, tolerations, the
        topology keys of its required pod affinity and hard spread constraints): the placement
        engine shares the answers between tasks alike in these (``Placer._key``)."""
        return []

    def static_predicate(self, task: snapshot.Task) -> list[tuple[str, Mask]]:
        """The checks of ``predicate`` that no pod coming or going changes (selectors, taints),
        over every node row: (what a node must do, phrased to follow "no node ...", passes).
        They decide which tasks can never run here (``framework.feasibility``)."""
        return []

    def node_score(self, task: snapshot.Task, rows: Rows, extra: Counts | None = None) -> Scores | None:
        """Scores for ``rows``; with ``extra``, as if ``extra[i]`` more copies were on ``rows[i]``
        (from what ``predicate`` may read, no more)."""
        return None

    def topological(self, task: snapshot.Task) -> bool:
        """Whether this plugin's ``domain_predicate`` or ``domain_score`` has anything to say on
        ``task`` (then it is placed one at a time, see the module docstring). Asked only for a
        task with pod terms of its own or matching a term some pod holds (``Topology.held``).
        Reads the task's placement, namespace and labels only: tasks alike in those get one answer
        (``actions.allocate`` asks once for a run of them)."""
        return False

    def domain_predicate(self, task: snapshot.Task) -> list[tuple[str, Mask]]:
        """(reason, passes) per check that depends on the pods in each row's topology domains, over every row."""
        return []

    def domain_rule(self, task: snapshot.Task) -> tuple[list[Mask], counted.Rule] | None:
        """This plugin's ``domain_predicate`` split into masks that copies of ``task`` placed one
        after another do not change and one ``counted.Rule`` that follows them, when it can be
        (then a run of such copies is placed in one step, see ``framework.counted``); else None."""
        return None

    def domain_split(self, task: snapshot.Task) -> list[scored.Part] | None:
        """This plugin's ``domain_score`` for copies of ``task`` placed one after another, as
        ``scored.Part``s in the order it sums them (none: it has no domain score for the task),
        when it can be split so and the plugin has no ``domain_predicate`` for the task (then a
        run of such copies is placed from a few candidate rows, see ``framework.scored``); else
        None, the default."""
        return None

    def domain_score(self, task: snapshot.Task, feasible: Mask) -> Scores | None:
        """Scores over every row that depend on the pods in its topology domains; ``feasible``:
        the rows that pass every check, over which scores are normalised (kube-scheduler's NormalizeScore)."""
        return None

    def victims(
        self, preemptor: snapshot.Task, candidates: Sequence[snapshot.Task], *, action: str
    ) -> list[snapshot.Task] | None:
        """The candidates this plugin allows to be evicted (``action``: one of ``PREEMPTS`` or ``RECLAIMS``)."""
        return None

    def enqueueable(self, job: str) -> bool | None:
        return None

    def allocatable(self, queue: str, task: snapshot.Task) -> bool | None:
        return None

    def allocatable_message(self, queue: str, task: snapshot.Task) -> str | None:
        """Why ``allocatable`` says no (for the pod's event), or None for the default wording."""
        return None

    def enqueue_message(self, job: str) -> str | None:
        """Why ``enqueueable`` says no (for the PodGroup's condition), or None for the default wording."""
        return None

    def preemptive(self, queue: str, task: snapshot.Task) -> bool | None:
        """Volcano's PreemptiveFn: may ``queue`` reclaim for ``task``? A plugin without it is asked
        ``allocatable`` instead."""
        return None

    def victim_queue_order(self, queue: str, preemptor_queue: str) -> tuple[Any, ...] | None:
        """Volcano's VictimQueueOrderFn, as a sort key: victims of lower keys are evicted first."""
        return None

    def allocatable_count(self, queue: str, task: snapshot.Task, count: int) -> int | None:
        """How many of ``count`` copies of ``task``, allocated one after another, ``allocatable``
        would let through (it stays false once false: allocations only add to the queue)."""
        return None

    def overused(self, queue: str) -> bool | None:
        return None
