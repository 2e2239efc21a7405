"""Shared by gangpreempt and gangreclaim: evict whole bundles, only if the whole gang then fits.

For one preemptor job (admitted, not pipelined), with candidates (running, preemptable tasks the
action may take): the candidates are grouped into bundles per victim job (``actions.bundles``),
ordered, handed to the plugins' ``victims`` hook ONCE as one ordered list (so stateful checks,
a queue's deserved share or guarantee, count every victim; ``every_tier``: every tier is
asked, not only the first that answers), rebuilt, and ordered again. Bundles
are then added one by one (a safe bundle task by task: each is surplus on its own). Once the
cluster's future-idle capacity plus what they free covers the preemptor's pending requests, a
trial runs inside a Statement: the chosen victims are evicted and EVERY pending task of the
gang is placed (pipelined) by the same placement engine allocate uses, with the queue's
``allocatable`` asked per task. If the whole gang is then pipelined the trial is kept,
otherwise discarded and the next bundle added. A kept trial is pruned before it is committed:
victims on no node the gang uses are dropped (a whole bundle only as a whole), then earlier
steps a later one made unnecessary (surplus replicas taken before a whole job had to go), each
change replayed as a fresh trial, so no eviction is made that the placement does not need.
Nothing is evicted when no trial succeeds.

Like Volcano, the whole cluster is one search domain here (no HyperNodes), so ``maxDomains`` has
nothing to cap; ``allowWholeBundle: false`` takes surplus replicas only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from scheduler.actions import bundles
from scheduler.api import snapshot
from scheduler.framework import placement, session, statement, tiers

__all__ = ["SETTLE_MOST", "run"]

SETTLE_MOST = 8  # earlier steps a successful trial tries to do without (each costs one or two trials)


def run(
    ssn: session.Session,
    plugins: tiers.Tiers,
    placer: placement.Placer,
    job: str,
    candidates: Sequence[snapshot.Task],
    *,
    action: str,
    reason: str,
    policy: Callable[[bundles.Bundle], Any],
    why: Callable[[bundles.Bundle], str],
    allow_whole: bool,
    every_tier: bool = False,
) -> bool:
    """Try to make room for ``job``'s whole gang; True if evictions (or placements) were committed."""
    pending = [t for t in ssn.pending_of(job) if not t.best_effort]
    if not pending or not candidates:
        return False
    need = sum((ssn.vector(t.request) for t in pending), np.zeros(len(ssn.dims)))
    asked = need > 0
    by_job: dict[str, list[snapshot.Task]] = {}
    for task in candidates:
        by_job.setdefault(task.job, []).append(task)
    raw = [b for victim, tasks in sorted(by_job.items()) for b in bundles.of_job(ssn, victim, tasks)]
    first = bundles.ordered(ssn, raw, need, policy)
    flat = list({t.key: t for b in first for t in b.tasks}.values())
    permitted = {t.key for t in plugins.victims(pending[0], flat, action=action, every_tier=every_tier)}
    valid = [
        b for b in bundles.ordered(ssn, bundles.allowed(first, permitted), need, policy) if allow_whole or not b.whole
    ]
    future = ssn.nodes.future[placer.ready].sum(axis=0)
    chosen: list[bundles.Bundle] = []
    freed = np.zeros(len(ssn.dims))
    seen: set[str] = set()
    for step in _steps(valid):  # a safe bundle's tasks one by one (each is surplus), a whole one at once
        chosen.append(step)
        for task in step.tasks:
            if task.key not in seen:
                seen.add(task.key)
                freed += ssn.vector(task.request)
        if np.any(future[asked] + freed[asked] < need[asked]):
            continue
        stmt = _trial(ssn, plugins, placer, job, pending, chosen, reason, why)
        if stmt is None:
            continue

        def attempt(steps: Sequence[bundles.Bundle]) -> statement.Statement | None:
            return _trial(ssn, plugins, placer, job, pending, steps, reason, why)

        stmt = _settle(ssn, attempt, pending, chosen, stmt)
        _record(ssn, job, stmt)
        stmt.commit()
        return True
    return False


def _settle(
    ssn: session.Session,
    attempt: Callable[[Sequence[bundles.Bundle]], statement.Statement | None],
    pending: list[snapshot.Task],
    chosen: list[bundles.Bundle],
    stmt: statement.Statement,
) -> statement.Statement:
    """The successful trial ``stmt`` with as few victims as this finds: first those on nodes the
    gang does not use are dropped, then each earlier step (up to ``SETTLE_MOST``) is left out in
    turn and kept out if the gang still fits without it (a later whole job may have made it
    unnecessary). Each change is replayed as a fresh trial; the last success is returned."""
    used = {ssn.row[t.key] for t in pending if ssn.status[t.key] is snapshot.TaskStatus.PIPELINED}
    needed = _prune(ssn, chosen, used)
    if _keys(needed) != _keys(chosen):
        stmt.discard()
        pruned = attempt(needed)
        if pruned is None:
            needed, pruned = chosen, attempt(chosen)
        assert pruned is not None  # the same trial succeeded a moment ago on the same session
        stmt = pruned
    for step in needed[:-1][:SETTLE_MOST]:
        without = [s for s in needed if s is not step]
        stmt.discard()
        trial = attempt(without)
        if trial is not None:
            needed, stmt = without, trial
            continue
        again = attempt(needed)
        assert again is not None
        stmt = again
    return stmt


def _keys(steps: Sequence[bundles.Bundle]) -> set[str]:
    return {t.key for b in steps for t in b.tasks}


def _steps(valid: Sequence[bundles.Bundle]) -> list[bundles.Bundle]:
    out = []
    for bundle in valid:
        if bundle.whole:
            out.append(bundle)
        else:
            out += [bundles.Bundle(bundle.job, False, (task,), bundle.why) for task in bundle.tasks]
    return out


def _trial(
    ssn: session.Session,
    plugins: tiers.Tiers,
    placer: placement.Placer,
    job: str,
    pending: list[snapshot.Task],
    chosen: Sequence[bundles.Bundle],
    reason: str,
    why: Callable[[bundles.Bundle], str],
) -> statement.Statement | None:
    """Evict ``chosen``, pipeline every pending task; the statement if the gang is pipelined."""
    stmt = statement.Statement(ssn)
    queue = ssn.job(job).queue
    evicted: set[str] = set()
    for bundle in chosen:
        for victim in bundle.tasks:
            if victim.key in evicted:
                continue
            evicted.add(victim.key)
            message = f"{reason} to make room for PodGroup {job}: {why(bundle)}"
            stmt.evict(victim.key, reason=reason, message=message)
    for task in pending:
        choice = placer.place(task) if plugins.allocatable(queue, task) else None
        if choice is None:
            stmt.discard()
            return None
        stmt.pipeline(task.key, choice[1])
    if not plugins.job_pipelined(job):
        stmt.discard()
        return None
    return stmt


def _prune(ssn: session.Session, chosen: Sequence[bundles.Bundle], used: set[int]) -> list[bundles.Bundle]:
    """The chosen bundles that free room on ``used`` rows: whole ones all or nothing, safe ones
    only their victims on those rows (a whole bundle kept covers its job's safe tasks too)."""
    whole_jobs = {b.job for b in chosen if b.whole and any(ssn.row[t.key] in used for t in b.tasks)}
    out = []
    for bundle in chosen:
        if bundle.whole:
            if bundle.job in whole_jobs:
                out.append(bundle)
            continue
        if bundle.job in whole_jobs:
            continue
        kept = tuple(t for t in bundle.tasks if ssn.row[t.key] in used)
        if kept:
            out.append(bundles.Bundle(bundle.job, False, kept, bundle.why))
    return out


def _record(ssn: session.Session, job: str, stmt: statement.Statement) -> None:
    ssn.diagnostics.evictions.setdefault(job, []).extend(stmt.evictions())
