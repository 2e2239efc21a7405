"""allocate: place pending tasks of admitted jobs, gang by gang, committing whole gangs only.

Queues take turns by queue order (lowest share first), re-evaluated after every job; jobs in
a queue go by job order (priority, then not-ready gangs first, then creation). Per task:
queue allocatable, held Spark capacity, predicates, best-scored node; idle → Allocate, only
future-idle (idle + releasing) → Pipeline. Then the job's statement is committed if the job is
ready, kept if it is pipelined (its resources stay reserved this cycle, nothing is bound),
otherwise discarded. A job whose members already run is ready on its own, so a new member
(a replacement, an elastic extra) is placed and bound alone.

Unlike Volcano, a ready job places all its remaining tasks in one turn instead of being
re-queued per task; the proportion plugin's allocatable check still caps it at its share.

Fast paths make the same plan in fewer steps: a gang's identical tasks placed in one batch
(``Placer.place_many``), and a run of one-task jobs alike placed together
(``_allocate_lone_tasks``) when one queue is left; for pod affinity and anti-affinity, a gang
kept one pod per node by its own hostname anti-affinity placed in one batch
(``Placer.place_apart``), one its own affinity holds in one domain placed by node score there
(``Placer.place_within``), and the queue asked once per run (``_allocate_topological``).
``SchedulerConfig.fast_paths`` false turns them all off: the reference path, job by job and
task by task, that equivalence tests compare with.

Parked jobs (``Session.parked``) keep their phase and are not placed: no pass over their
tasks, no fit errors (their last verdict stands).

A plugin that ``interleaves`` (capacity: a queue may go past its deserved share up to its
capability, so shares come from taking turns) makes every turn Volcano's: a ready job places
one task and goes back in line (``_interleaved_turn``), and queue keys are recomputed every turn
when one plugin's keys are shared across queues (``shared_queue_order``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.api import snapshot
from scheduler.framework import placement, session, statement, tiers

__all__ = ["ADMITTED", "LONE_RUN", "allocate_job", "blocked", "execute"]

ADMITTED = ("Inqueue", "Running", "Unknown")
# Jobs placed per run of one-task jobs: enough to amortise the step, few enough that the first
# statements commit (and their binds go out) while the rest of the run is still being placed.
LONE_RUN = 256


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    placer = placement.Placer(ssn, plugins)
    enqueue_on = "enqueue" in ssn.config.actions
    fast = ssn.config.fast_paths
    by_queue: dict[str, list[str]] = {}
    for key, info in ssn.snapshot.jobs.items():
        if ssn.phase[key] == "Pending" and not enqueue_on and key not in ssn.never:
            ssn.phase[key] = "Inqueue"  # Volcano: without enqueue every job counts as admitted
        if ssn.phase[key] not in ADMITTED or info.queue not in ssn.snapshot.queues or key in ssn.never:
            continue
        if ssn.parked(key):
            continue  # did not fit, and nothing it could use changed since (``SchedulerConfig.parked``)
        if ssn.counts.pending[key] <= ssn.counts.pending_best_effort[key]:
            continue  # no pending task that asks for resources
        invalid = plugins.job_valid(key)
        if invalid is not None:
            ssn.diagnostics.invalid[key] = invalid
            continue
        by_queue.setdefault(info.queue, []).append(key)
    for jobs in by_queue.values():
        jobs.sort(key=plugins.job_order, reverse=True)
    # A queue's order key only changes when its own allocation does (``Plugin.queue_order``), and
    # a turn only allocates to the served queue: keep the keys and recompute the served one.
    order = {queue: plugins.queue_order(queue) for queue in by_queue}
    while by_queue:
        if plugins.shared_queue_order:  # keys move with other queues' allocations too (a queue tree)
            order = {queue: plugins.queue_order(queue) for queue in by_queue}
        queue = min(by_queue, key=order.__getitem__)
        jobs = by_queue[queue]
        if plugins.overused(queue):
            for job in jobs:
                ssn.diagnostics.job_errors[job] = f"queue {queue} is overused"
            del by_queue[queue]
            continue
        job = jobs.pop()
        if not jobs:
            del by_queue[queue]
        # With one queue left, turns never switch queues: a run of one-task jobs alike can be
        # placed in one step (the bench's 5,000 single pods spent most of a cycle job by job).
        lone = (
            _allocate_lone_tasks(ssn, plugins, placer, queue, job, jobs) if fast and by_queue.keys() <= {queue} else 0
        )
        if lone > 1:
            del jobs[len(jobs) - (lone - 1) :]  # the run's other jobs, from the end of the list
            if not jobs:
                by_queue.pop(queue, None)
        elif not lone and plugins.interleaves:
            if _interleaved_turn(ssn, plugins, placer, job):  # ready with tasks left: back in line
                jobs = by_queue.setdefault(queue, jobs)
                jobs.append(job)
                jobs.sort(key=plugins.job_order, reverse=True)
        elif not lone:
            allocate_job(ssn, plugins, placer, job)
        order[queue] = plugins.queue_order(queue)


def allocate_job(ssn: session.Session, plugins: tiers.Tiers, placer: placement.Placer, job: str) -> None:
    info = ssn.job(job)
    stmt = statement.Statement(ssn)
    failed: dict[int, str] = {}  # same shape (request and placement) fails the same way
    fast = ssn.config.fast_paths
    for run in _runs(ssn, job):
        task = run[0]
        shape = task.shape
        if _topological(plugins, run):
            _allocate_topological(ssn, plugins, placer, stmt, info.queue, run)
            continue
        if shape in failed:
            for other in run:
                ssn.diagnostics.fit_errors[other.key] = failed[shape]
            continue
        # Identical tasks: as many as the queue lets through go in one batched step, with the
        # choices the one-by-one loop below would make; it takes over where the batch stops.
        if fast and (not ssn.holds.owed or not ssn.holds.against(job).any()):
            rows = placer.place_many(task, plugins.allocatable_count(info.queue, task, len(run)))
            if job in ssn.holds.owed:  # a Spark driver's own hold is consumed pod by pod
                for other, row in zip(run, rows, strict=False):
                    stmt.allocate(other.key, row)
            elif rows:
                stmt.allocate_many(run[: len(rows)], rows)
            run = run[len(rows) :]
        for other in run:
            if shape in failed:
                ssn.diagnostics.fit_errors[other.key] = failed[shape]
                continue
            # Nodes first, then the queue: when both refuse, "Insufficient cpu" is the clearer answer.
            choice = placer.place(task)
            reason = placer.explain(task) if choice is None else blocked(ssn, plugins, info.queue, task)
            if choice is None or reason:
                failed[shape] = ssn.diagnostics.fit_errors[other.key] = reason
                continue
            kind, row = choice
            if kind == placement.ALLOCATE:
                stmt.allocate(other.key, row)
            else:
                stmt.pipeline(other.key, row)
    if plugins.job_ready(job):
        stmt.commit()
    elif not plugins.job_pipelined(job):
        stmt.discard()


def _interleaved_turn(ssn: session.Session, plugins: tiers.Tiers, placer: placement.Placer, job: str) -> bool:
    """One turn of ``job`` as Volcano's allocate takes it: its tasks one by one until the job is
    ready, then the turn ends (a ready job gets one task a turn); the statement is committed when
    the job is ready, as in ``allocate_job``. True when the turn ended with tasks left to place."""
    info = ssn.job(job)
    stmt = statement.Statement(ssn)
    failed: dict[int, str] = {}  # a topological task's fit depends on the ones before it: not kept
    todo = [task for run in _runs(ssn, job) for task in run]
    yielded = False
    for i, task in enumerate(todo):
        if task.shape in failed:
            ssn.diagnostics.fit_errors[task.key] = failed[task.shape]
            continue
        choice = placer.place(task)
        reason = placer.explain(task) if choice is None else blocked(ssn, plugins, info.queue, task)
        if choice is None or reason:
            ssn.diagnostics.fit_errors[task.key] = reason
            if not plugins.topological(task):
                failed[task.shape] = reason
            continue
        kind, row = choice
        if kind == placement.ALLOCATE:
            stmt.allocate(task.key, row)
        else:
            stmt.pipeline(task.key, row)
        if i + 1 < len(todo) and plugins.job_ready(job):
            yielded = True
            break
    if plugins.job_ready(job):
        stmt.commit()
        return yielded
    if not plugins.job_pipelined(job):
        stmt.discard()
    return False


def _allocate_topological(
    ssn: session.Session,
    plugins: tiers.Tiers,
    placer: placement.Placer,
    stmt: statement.Statement,
    queue: str,
    run: list[snapshot.Task],
) -> None:
    """Each task of the run on its own: its pod affinity and spread depend on where the ones
    before it went (in this statement too), so no failed shape is reused; a run kept one pod per
    node by its own hostname anti-affinity goes in one batch first (``Placer.place_apart``), with
    the choices the loop below would make, and the loop takes over where the batch stops; a run
    its own required pod affinity holds in one domain takes the best rows there by node score
    alone (``Placer.together``), as the domain checks and scores would choose: as many as the
    queue lets through in one step (``Placer.place_many_within``), then one by one
    (``place_within``); a run whose one domain check is hard spread on its own pods goes in one
    batch (``Placer.place_counted``); any other run within what the queue lets through goes the
    long way with the placement entry read once (``Placer.place_each``).

    On the fast paths the queue is asked once how many allocations in a row it lets through
    (``Tiers.allocatable_count``): that many allocations pass ``allocatable`` without asking
    again; after a pipeline, or past that many, each task is asked (``blocked``) as before."""
    job, owed = run[0].job, ssn.holds.owed
    allowed = 0
    if ssn.config.fast_paths and job not in owed and (not owed or not ssn.holds.against(job).any()):
        allowed = plugins.allocatable_count(queue, run[0], len(run))
        rows = placer.place_apart(run, allowed) or placer.place_counted(run, allowed)
        if rows:
            stmt.allocate_many(run[: len(rows)], rows)
            run = run[len(rows) :]
            allowed -= len(rows)
        else:
            placed = placer.place_scored(run, allowed, lambda task, row: stmt.allocate(task.key, row))
            run = run[placed:]
            allowed -= placed
        if owed:
            allowed = 0  # held Spark capacity is checked task by task (``blocked``)
    # Rows a run held in one domain by its own pod affinity goes to (``Placer.together``): looked
    # for once, after the first allocation (the long way picks the first copy's row as
    # ``place_within`` would, so looking before it saves nothing: a domain the run's pods
    # already hold is found as well after it).
    fast = ssn.config.fast_paths and bool(run)
    held: npt.NDArray[np.bool_] | None = None
    retry = each = fast
    i = 0
    while i < len(run):
        wanted = min(allowed, len(run) - i)
        if held is not None and allowed > 0:  # the next copies in one step, as the loop below places them
            rows = placer.place_many_within(run[i], held, wanted)
            if len(rows) < wanted:
                held = None  # no row of the domain fits another copy: the rest go the long way
            if rows:
                stmt.allocate_many(run[i : i + len(rows)], rows)
                i += len(rows)
                allowed -= len(rows)
                continue
        elif each and not retry and allowed > 0:  # the long way's choices, the entry read once
            placed = placer.place_each(run[i : i + wanted], lambda task, row: stmt.allocate(task.key, row))
            i += placed
            allowed -= placed
            each = placed == wanted  # stopped short: no idle row takes the next copy (the long way goes on)
            if placed:
                continue
        task = run[i]
        i += 1
        inside = placer.place_within(task, held) if held is not None else None
        choice = (placement.ALLOCATE, inside) if inside is not None else placer.place(task)
        if choice is None:
            reason = placer.explain(task)
        elif allowed > 0 and choice[0] == placement.ALLOCATE:
            reason = ""  # within what the queue lets through in a row
        else:
            reason = blocked(ssn, plugins, queue, task)
        if choice is None or reason:
            ssn.diagnostics.fit_errors[task.key] = reason
            continue
        kind, row = choice
        if kind == placement.ALLOCATE:
            stmt.allocate(task.key, row)
            allowed -= 1
            if retry:
                retry, held = False, placer.together(run)
        else:
            stmt.pipeline(task.key, row)
            allowed, held, retry = 0, None, False  # the count was for allocations in a row


def _topological(plugins: tiers.Tiers, run: list[snapshot.Task]) -> bool:
    """Whether some task of the run is topological, asked once per namespace and labels: the
    run's tasks share their placement, and ``Plugin.topological`` reads no more than those."""
    first = run[0]
    if plugins.topological(first):
        return True
    if len(run) == 1 or not plugins.session.topology.active:
        return False  # nothing to match: no task is
    namespace, labels = first.namespace, first.labels
    return any(
        plugins.topological(t)
        for t in run
        if not (t.labels is labels or t.labels == labels) or t.namespace != namespace
    )


def _lone_task(ssn: session.Session, job: str) -> snapshot.Task | None:
    """The job's only pending task, if it has exactly one and it asks for resources."""
    if ssn.counts.pending[job] != 1 or ssn.counts.pending_best_effort[job]:
        return None
    return ssn.pending_of(job)[0]


def _allocate_lone_tasks(
    ssn: session.Session,
    plugins: tiers.Tiers,
    placer: placement.Placer,
    queue: str,
    job: str,
    jobs: list[str],
) -> int:
    """``allocate_job`` for ``job`` and the jobs next in line (the end of ``jobs``, last first)
    while each has one pending task of the same shape; how many jobs it took care of (0: none).

    One ``place_many`` for the run, capped by the queue as the turns would be, then each job's
    own statement, committed as ``allocate_job`` would. The same plan, job by job: the placements
    are ``place``'s in order, and the queue's allocatable cap is what the turns would see one by
    one. The run stops where a turn would differ: the queue overused, or a job not ready after
    its allocation; rows placed for jobs not reached are simply not allocated (the placer's
    rankings read the rows as they are). Not with Spark holds.
    """
    if ssn.holds.owed:
        return 0
    task = _lone_task(ssn, job)
    if task is None or plugins.topological(task):
        return 0
    run = [task]
    for other in reversed(jobs):
        more = _lone_task(ssn, other)
        if more is None or more.shape != task.shape or len(run) == LONE_RUN or plugins.topological(more):
            break
        run.append(more)
    if len(run) < 2:
        return 0
    rows = placer.place_many(task, plugins.allocatable_count(queue, task, len(run)))
    for i, (lone, row) in enumerate(zip(run, rows, strict=False)):
        if i and plugins.overused(queue):  # not within the cap, but the turn would check it
            return i
        stmt = statement.Statement(ssn)
        stmt.allocate_many([lone], [row])
        if plugins.job_ready(lone.job):
            stmt.commit()
            continue
        if not plugins.job_pipelined(lone.job):
            stmt.discard()
        return i + 1
    return len(rows)


def _runs(ssn: session.Session, job: str) -> list[list[snapshot.Task]]:
    """The job's pending non-BestEffort tasks in task order, cut where request or placement changes."""
    runs: list[list[snapshot.Task]] = []
    last = -1
    for task in ssn.pending_of(job):
        if task.best_effort:
            continue
        if task.shape == last:
            runs[-1].append(task)
        else:
            runs.append([task])
            last = task.shape
    return runs


def blocked(ssn: session.Session, plugins: tiers.Tiers, queue: str, task: snapshot.Task) -> str:
    """Why the task may not take resources regardless of nodes, or "" if it may."""
    if not plugins.allocatable(queue, task):
        return plugins.allocatable_refusal(queue, task) or f"queue {queue} would exceed its deserved share"
    held = ssn.holds.against(task.job)
    if ssn.holds.owed and held.any():
        req = ssn.vector(task.request)
        asked = (req > 0) & (held > 0)
        if np.any(ssn.nodes.free_total[asked] - req[asked] < held[asked]):
            holders = sorted(j for j in ssn.holds.owed if j != task.job)
            spark = ", ".join(j for j in holders if ssn.snapshot.jobs[j].spark)
            staged = ", ".join(j for j in holders if not ssn.snapshot.jobs[j].spark)
            why = [f"the executors of Spark application(s) {spark}"] if spark else []
            why += [f"the later stages of group(s) {staged}"] if staged else []
            return f"capacity is held for {' and '.join(why)}"
    return ""
