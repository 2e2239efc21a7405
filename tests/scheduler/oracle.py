"""An independent oracle for placement: the plan a cycle makes when every task is placed naively.

``NaivePlacer.place`` has no entry cache, no ``Ranking``, no shortcut, no incremental refresh and
no lazy future: for every task it asks every node from scratch, from the plugins' plain hooks
only (``Tiers.predicate``, ``Tiers.node_score`` without ``extra``, and for a topological task
``Tiers.domain_predicate`` and ``Tiers.domain_score``), then takes the best node. None of the
batch helpers (``domain_rule``, ``domain_split``, ``allocatable_count``, ``static_predicate``,
``node_score``'s ``extra``) is asked. The reference's semantics, restated:

- a node fits when it is ready, passes every predicate (and, for a topological task, every
  domain predicate) and its idle (for Allocate) or future idle (for Pipeline) covers the
  request in every dimension the task asks for (one it does not ask for may be overcommitted);
- a node's score is its node score (against idle, also when pipelining) plus, for a
  topological task, its domain score normalised over the fitting nodes;
- Allocate on the best idle fit; otherwise Pipeline on the best future fit; otherwise none.
  Ties go to the lowest node row (``numpy.argmax``'s first maximum), as the reference breaks
  them (``Placer.place``, ``apart.best_rows``, ``ranking.Ranking``'s keys): the tie-break is
  deterministic, so the oracle must reproduce the plan exactly, verdicts included.

``allocate_naively`` drives it through Volcano's allocate loop as ``actions.allocate`` states it for the
reference path (``fast_paths`` off), rewritten here: queue keys recomputed every turn, jobs
sorted by job order once, a job's pending tasks in task order, a failed shape remembered
within a job for tasks that are not topological, the gang committed when ready, kept when
pipelined, discarded otherwise. It is test code driving the cycle itself because the compiled
core's ``allocate`` cannot be handed another placer (a compiled function checks its
``placement.Placer`` argument). Queue and hold refusals (``allocate.blocked``) and the
wording of fit errors (``feasibility.fit_error``) are the product's: they decide no node.
Not reproduced: a plugin that ``interleaves`` (capacity; no seeded conf has it: ``allocate_naively``
refuses it). ``schedule`` runs the conf's other actions as the cycle does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler import configure, cycle
from scheduler.actions import allocate
from scheduler.actions import registry as action_registry
from scheduler.api import building, plan, snapshot
from scheduler.framework import feasibility, placement, session, statement, tiers, verdicts
from tests.support import scenarios

__all__ = ["NaivePlacer", "allocate_naively", "schedule"]

Mask = npt.NDArray[np.bool_]
ADMITTED = ("Inqueue", "Running", "Unknown")


class NaivePlacer:
    """Every node asked again for every task (see the module docstring)."""

    def __init__(self, ssn: session.Session, plugins: tiers.Tiers) -> None:
        self.session = ssn
        self.plugins = plugins
        self.rows = np.arange(len(ssn.snapshot.nodes), dtype=np.intp)
        self.ready = np.array([n.ready for n in ssn.snapshot.nodes], dtype=bool)

    def checks(self, task: snapshot.Task) -> list[tuple[str, Mask]]:
        checks = self.plugins.predicate(task, self.rows)
        if self.plugins.topological(task):
            checks += self.plugins.domain_predicate(task)
        return checks

    def place(self, task: snapshot.Task, *, pipeline: bool = True) -> tuple[str, int] | None:
        """(ALLOCATE or PIPELINE, node row) of the best node, or None when none fits."""
        if not len(self.rows):
            return None
        ok = self.ready.copy()
        for _, passes in self.checks(task):
            ok &= passes
        score = self.plugins.node_score(task, self.rows)
        req = self.session.vector(task.request)
        nodes = self.session.nodes
        for kind, free in ((placement.ALLOCATE, nodes.idle), (placement.PIPELINE, nodes.future)):
            if kind == placement.PIPELINE and not pipeline:
                break
            fits = ok & np.all((free >= req) | (req <= 0), axis=1)
            if not fits.any():
                continue
            total = np.where(fits, score, -np.inf)
            if self.plugins.topological(task):
                extra = self.plugins.domain_score(task, fits)
                if extra is not None:
                    total = np.where(fits, score + extra, -np.inf)
            return kind, int(np.argmax(total))
        return None

    def explain(self, task: snapshot.Task) -> str:
        return feasibility.fit_error(self.session, self.ready, self.checks(task), task)


def schedule(data: Mapping[str, Any], conf: str = "") -> plan.Plan:
    """``scenarios.schedule``'s cycle over ``data`` with ``allocate_naively`` in place of the product's."""
    ssn, plugins = cycle.open_session(building.build(**data), configure.parse(conf, fast_paths=False), scenarios.NOW)
    assert ssn.config.backend != "native", "the oracle places pods: the native backend places none"
    for name in ssn.config.actions:
        if name == "allocate":
            allocate_naively(ssn, plugins)
        else:
            action_registry.ACTIONS[name](ssn, plugins)
    return verdicts.close(ssn)


def allocate_naively(ssn: session.Session, plugins: tiers.Tiers) -> None:
    """Volcano's allocate over ``NaivePlacer`` (see the module docstring)."""
    assert not plugins.interleaves, "the oracle does not take interleaved turns"
    placer = NaivePlacer(ssn, plugins)
    queues: dict[str, list[str]] = {}
    for key in _admitted(ssn, plugins):
        queues.setdefault(ssn.job(key).queue, []).append(key)
    for jobs in queues.values():
        jobs.sort(key=plugins.job_order)
    while queues:
        queue = min(queues, key=plugins.queue_order)
        jobs = queues[queue]
        if plugins.overused(queue):
            for job in jobs:
                ssn.diagnostics.job_errors[job] = f"queue {queue} is overused"
            del queues[queue]
            continue
        job = jobs.pop(0)
        if not jobs:
            del queues[queue]
        _place_job(ssn, plugins, placer, job)


def _admitted(ssn: session.Session, plugins: tiers.Tiers) -> list[str]:
    """The jobs allocate serves, in snapshot order; Pending ones admitted when there is no
    enqueue action, invalid ones given their verdict."""
    served = []
    for key, job in ssn.snapshot.jobs.items():
        if key in ssn.never:
            continue
        if ssn.phase[key] == "Pending" and "enqueue" not in ssn.config.actions:
            ssn.phase[key] = "Inqueue"
        if ssn.phase[key] not in ADMITTED or job.queue not in ssn.snapshot.queues or ssn.parked(key):
            continue
        if not any(not task.best_effort for task in ssn.pending_of(key)):
            continue
        invalid = plugins.job_valid(key)
        if invalid is not None:
            ssn.diagnostics.invalid[key] = invalid
            continue
        served.append(key)
    return served


def _place_job(ssn: session.Session, plugins: tiers.Tiers, placer: NaivePlacer, job: str) -> None:
    """The job's pending tasks that ask for resources, in task order, in one statement."""
    stmt = statement.Statement(ssn)
    queue = ssn.job(job).queue
    failed: dict[int, str] = {}
    tasks = [task for task in ssn.pending_of(job) if not task.best_effort]
    for task, topological in zip(tasks, _topological(plugins, tasks), strict=True):
        if not topological and task.shape in failed:
            ssn.diagnostics.fit_errors[task.key] = failed[task.shape]
            continue
        choice = placer.place(task)
        reason = placer.explain(task) if choice is None else allocate.blocked(ssn, plugins, queue, task)
        if choice is None or reason:
            ssn.diagnostics.fit_errors[task.key] = reason
            if not topological:
                failed[task.shape] = reason
            continue
        kind, row = choice
        if kind == placement.ALLOCATE:
            stmt.allocate(task.key, row)
        else:
            stmt.pipeline(task.key, row)
    if plugins.job_ready(job):
        stmt.commit()
    elif not plugins.job_pipelined(job):
        stmt.discard()


def _topological(plugins: tiers.Tiers, tasks: list[snapshot.Task]) -> list[bool]:
    """Per task, whether its run (the tasks next to it of the same shape) has a topological task:
    the reference places such a run task by task and remembers no failed shape for it."""
    flags: list[bool] = []
    start = 0
    for end in range(1, len(tasks) + 1):
        if end == len(tasks) or tasks[end].shape != tasks[start].shape:
            run = tasks[start:end]
            flags += [any(plugins.topological(task) for task in run)] * len(run)
            start = end
    return flags
