"""Why a PodGroup waits, from the very functions the cycle decides with. Pure.

``explain(snapshot, config, "ns/name", now) -> Explanation`` first runs the cycle itself
(``cycle.open_session`` + ``cycle.run``, the conf's actions in order), so what it says the
scheduler does to the group (admitted or kept Pending, by whom; pods bound; the condition) is
what the scheduler does, not a second opinion. Then, for the detail, on a second session opened
the same way (fast paths off) with only the enqueue action run:

- ``never``: why the gang can never run on this cluster's nodes (``framework.feasibility``,
  the check that keeps it Pending), per task shape too;
- the pods: how many exist of the minMember the gang needs, and who creates missing ones
  (``api.owners``, by the ownerReference: the scheduler's condition says the same);
- per pending task shape: how many nodes each predicate and each resource refuses (the
  plugins' own ``predicate`` and ``domain_predicate`` hooks, so pod affinity, anti-affinity
  and topology spread are named too, and the placement engine's idle capacity);
- the best partial fit: pending tasks placed one after another on idle capacity as
  ``allocate`` scores nodes (discarded afterwards);
- what the cycle evicts to make room for the group (preempt, reclaim, gangpreempt, gangreclaim,
  as committed: ``tools.evictions``), which pods of which jobs, and why;
- the queue's deserved share and use (with capacity: at each level of the queue tree, and the
  level whose real capability holds the group back); for a Pending group, the enqueue facts: which plugin
  refused (``Tiers.enqueue_refusal``, as the action asks), overcommit's unreserved capacity
  and the largest reservers, proportion's real capability of the queue.

``explain_all`` explains several groups over one cycle. ``tools.workloads`` finds a workload's
group and who creates its pods; ``tools.sides``: which side it waits on (native); ``tools.report`` prints.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime

import numpy as np

from scheduler import cycle
from scheduler import errors as scheduler_errors
from scheduler.actions import registry as action_registry
from scheduler.api import owners as creators
from scheduler.api import plan, resources, snapshot
from scheduler.framework import config, feasibility, placement, session, statement, tiers
from scheduler.plugins import overcommit, proportion
from scheduler.tools import evictions, queueshare

__all__ = ["EPOCH", "Enqueue", "Explanation", "Shape", "explain", "explain_all"]

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)  # ``now`` only matters to Spark timeouts


@dataclasses.dataclass(frozen=True, slots=True)
class Shape:
    """Pending tasks with one request and placement, and how many nodes refuse them and why."""

    request: resources.Resource
    tasks: int
    failures: tuple[tuple[str, int], ...]  # (reason, nodes), largest first
    feasible_nodes: int  # nodes where one such task fits on idle capacity right now
    never: str | None  # why no node could ever hold one


@dataclasses.dataclass(frozen=True, slots=True)
class Enqueue:
    admitted: bool  # what the enqueue action decided this cycle
    refused_by: str | None  # "never" or the plugin that said no
    reason: str  # the condition's message when refused, else ""
    min_resources: resources.Resource | None
    idle: resources.Resource  # overcommit: allocatable × factor − used, over all nodes
    promised: resources.Resource  # what other admitted groups still reserve
    reservers: tuple[tuple[str, resources.Resource], ...]  # the largest of them, by cpu
    shortfall: resources.Resource  # minResources − (idle − promised), positive parts
    capability: resources.Resource | None  # proportion: the queue's real capability (None: no proportion)
    capability_shortfall: resources.Resource  # minResources + queue's use and reservations − capability


@dataclasses.dataclass(frozen=True, slots=True)
class Explanation:
    podgroup: str
    owner: tuple[str, str] | None  # (kind, name) from the ownerReference
    phase: str  # as the cluster has it
    next_phase: str  # what this cycle's plan writes
    state: str  # completed | never | no-pods | not-admitted | invalid | waiting | placed | running | no-queue
    min_member: int
    tasks: int  # pods that exist
    ready: int
    pending: int  # pending pods that ask for resources
    bound_now: int  # pods the cycle binds (or pipelines) now
    creator: str | None  # who should create the missing pods
    never: str | None
    condition: plan.Condition | None  # the plan's Unschedulable condition, if any
    nodes: int
    shapes: tuple[Shape, ...]
    fit: int  # pending tasks that would fit now, one after another
    needed: int  # more ready tasks minMember asks for
    fit_nodes: tuple[tuple[str, int], ...]  # (node, tasks) of that partial fit
    queue: queueshare.QueueShare
    enqueue: Enqueue | None  # None unless the group was Pending when the cycle began
    free_up: resources.Resource  # requests of the needed tasks that do not fit now
    verdict: str
    evictions: tuple[evictions.Eviction, ...] = ()  # what the cycle evicts to make room for it
    side: str = ""  # native backend (``tools.sides``): queue-gate | kube-scheduler | ""; and the native
    native_condition: tuple[str, str, str] | None = None  # PodGroupInitiallyScheduled (status, reason, message)


@dataclasses.dataclass(frozen=True, slots=True)
class _Facts:
    """What the cycle decided about one group, for its state and verdict."""

    queue: queueshare.QueueShare
    never: str | None
    invalid: plan.Invalid | None
    refusal: str | None  # who kept it Pending
    placed: int  # pods bound or pipelined this cycle


def explain(
    snap: snapshot.Snapshot, conf: config.SchedulerConfig, key: str, now: datetime.datetime = EPOCH
) -> Explanation:
    return explain_all(snap, conf, [key], now)[0]


def explain_all(
    snap: snapshot.Snapshot, conf: config.SchedulerConfig, keys: list[str], now: datetime.datetime = EPOCH
) -> list[Explanation]:
    for key in keys:
        if key not in snap.jobs:
            raise scheduler_errors.SchedulerError(f"podgroup {key} not found")
    decided, decided_plugins = cycle.open_session(snap, conf, now)
    outcome = cycle.run(decided, decided_plugins)
    ssn, plugins = cycle.open_session(snap, dataclasses.replace(conf, fast_paths=False), now)
    if "enqueue" in conf.actions:
        action_registry.ACTIONS["enqueue"](ssn, plugins)
    placer = placement.Placer(ssn, plugins)
    return [_one(decided, outcome, ssn, plugins, placer, key) for key in keys]


def _one(
    decided: session.Session,
    outcome: plan.Plan,
    ssn: session.Session,
    plugins: tiers.Tiers,
    placer: placement.Placer,
    key: str,
) -> Explanation:
    snap, job = ssn.snapshot, ssn.job(key)
    verdict = outcome.podgroup(key)
    condition = next((c for c in verdict.conditions if c.type == "Unschedulable"), None)
    placed = [p for p in (*outcome.binds(), *outcome.pipelined()) if snap.tasks[p].job == key]
    pending = [t for t in ssn.pending_tasks(key) if not ssn.task(t).best_effort]
    ready = ssn.counts.ready[key]
    needed = max(job.min_member - ready - ssn.counts.pending_best_effort[key], 0)
    queue = queueshare.of(ssn, plugins, job.queue, key, pending)
    enqueue = _enqueue(decided, ssn, plugins, key, verdict.phase) if job.phase == "Pending" else None
    fit_rows, free_up = _partial_fit(ssn, placer, pending, needed)
    fit = sum(fit_rows.values())
    never = decided.never.get(key)
    facts = _Facts(
        queue, never, decided.diagnostics.invalid.get(key), decided.diagnostics.refusals.get(key), len(placed)
    )
    state = _state(job, verdict.phase, needed, facts)
    missing = creators.creator(job.owner) if len(job.tasks) < job.min_member and state != "completed" else None
    nodes = snap.nodes
    return Explanation(
        podgroup=key,
        owner=job.owner,
        phase=job.phase,
        next_phase=verdict.phase,
        state=state,
        min_member=job.min_member,
        tasks=len(job.tasks),
        ready=ready,
        pending=len(pending),
        bound_now=len(placed),
        creator=missing,
        never=never,
        condition=condition,
        nodes=len(nodes),
        shapes=_shapes(ssn, plugins, placer, pending),
        fit=fit,
        needed=needed,
        fit_nodes=tuple(sorted(((nodes[r].name, n) for r, n in fit_rows.items()), key=lambda x: (-x[1], x[0]))),
        queue=queue,
        enqueue=enqueue,
        free_up=free_up if state == "waiting" else resources.Resource(),
        verdict=_verdict(job, state, facts, condition, missing, needed, fit),
        evictions=evictions.of(decided, outcome, key),
    )


def _partial_fit(
    ssn: session.Session, placer: placement.Placer, pending: list[str], needed: int
) -> tuple[collections.Counter[int], resources.Resource]:
    """(tasks per node row that fit now, one after another; what must free up for minMember).

    Placed through a statement so the session sees each placement, then thrown away."""
    stmt = statement.Statement(ssn)
    rows: collections.Counter[int] = collections.Counter()
    unfit = np.zeros(len(ssn.dims))
    for task_key in pending:
        choice = placer.place(ssn.task(task_key), pipeline=False)
        if choice is None:
            unfit += ssn.vector(ssn.task(task_key).request)
            continue
        stmt.allocate(task_key, choice[1])
        rows[choice[1]] += 1
    stmt.discard()
    fit = sum(rows.values())
    missing = max(needed - fit, 0)  # only the shortfall towards minMember must free up
    if not missing:
        return rows, resources.Resource()
    per_task = unfit / max(len(pending) - fit, 1)
    return rows, resources.from_vector(np.ceil(per_task * missing), ssn.dims)


def _shapes(
    ssn: session.Session, plugins: tiers.Tiers, placer: placement.Placer, pending: list[str]
) -> tuple[Shape, ...]:
    groups: dict[tuple[resources.Resource, object], list[str]] = {}
    for key in pending:
        task = ssn.task(key)
        groups.setdefault((task.request, task.placement), []).append(key)
    out = []
    for keys in groups.values():
        task = ssn.task(keys[0])
        counts: collections.Counter[str] = collections.Counter()
        counts[feasibility.NOT_READY] = int((~placer.ready).sum())
        ok = placer.ready.copy()
        for reason, mask in placer.checks(task):  # pod affinity and topology spread included
            counts[reason] += int((~mask).sum())
            ok &= mask
        req = ssn.vector(task.request)
        for col in np.flatnonzero(req > 0):
            short = ssn.nodes.idle[:, col] < req[col]
            counts[feasibility.shortage(ssn.dims[col])] += int(short.sum())
            ok &= ~short
        failures = tuple(sorted(((r, n) for r, n in counts.items() if n), key=lambda x: (-x[1], x[0])))
        never = feasibility.task_never(ssn, plugins, task) if ssn.snapshot.nodes else None
        out.append(Shape(task.request, len(keys), failures, int(ok.sum()), never))
    return tuple(out)


def _enqueue(decided: session.Session, ssn: session.Session, plugins: tiers.Tiers, key: str, phase: str) -> Enqueue:
    """The enqueue decision (from the cycle) and the plugins' figures behind it (``ssn``: after
    enqueue alone, so other groups it admitted count as reserving)."""
    job = ssn.job(key)
    option = ssn.config.plugin("overcommit") or config.PluginOption("overcommit")
    idle = overcommit.Overcommit(option, ssn).idle
    zero = np.zeros(len(ssn.dims))
    owed = {other: overcommit.promised(ssn, other) for other in ssn.snapshot.jobs if other != key}
    promised = sum(owed.values(), zero.copy())
    cpu = ssn.dims.index(resources.CPU)
    largest = sorted(((k, v) for k, v in owed.items() if v.any()), key=lambda kv: (-kv[1][cpu], kv[0]))[:5]
    want = ssn.vector(job.min_resources) if job.min_resources is not None else zero
    asked = want > 0
    shortfall = np.where(asked, np.maximum(want + promised - idle, 0), 0)
    capability, over = None, zero
    configured = next((p for p in plugins.all if isinstance(p, proportion.Proportion)), None)
    if configured is not None and job.queue in configured.real_capability:
        real = configured.real_capability[job.queue]
        capability = resources.from_vector(np.where(np.isfinite(real), real, 0), ssn.dims)
        mine = sum((owed[k] for k, j in ssn.snapshot.jobs.items() if j.queue == job.queue and k != key), zero.copy())
        total = want + ssn.allocated.of_queue(job.queue) + mine
        over = np.where(asked & np.isfinite(real), np.maximum(total - real, 0), 0)
    refusal = decided.diagnostics.refusals.get(key)
    return Enqueue(
        admitted=phase != "Pending",
        refused_by=refusal,
        reason=decided.diagnostics.job_errors.get(key, "") if refusal else "",
        min_resources=job.min_resources,
        idle=resources.from_vector(np.maximum(idle, 0), ssn.dims),
        promised=resources.from_vector(promised, ssn.dims),
        reservers=tuple((k, resources.from_vector(v, ssn.dims)) for k, v in largest),
        shortfall=resources.from_vector(shortfall, ssn.dims),
        capability=capability,
        capability_shortfall=resources.from_vector(over, ssn.dims),
    )


def _state(job: snapshot.Job, phase: str, needed: int, facts: _Facts) -> str:
    queue = facts.queue
    if not queue.exists:
        return "no-queue"
    if job.held is not None:  # the snapshot holds it: an unsound spec, a queue it may not use
        return "invalid"
    if phase == "Completed":  # ran to its end (its pods may have been removed since)
        return "completed"
    if facts.never is not None:
        return "never"
    if facts.invalid is not None and len(job.tasks) >= job.min_member and phase != "Pending":
        return "invalid"  # a Pending group refused as invalid (capacity: not a leaf) is not admitted
    if len(job.tasks) < job.min_member:
        return "no-pods"
    if phase == "Pending":
        return "not-admitted"
    if facts.placed:
        return "placed"
    return "running" if needed == 0 else "waiting"


def _verdict(
    job: snapshot.Job,
    state: str,
    facts: _Facts,
    condition: plan.Condition | None,
    missing: str | None,
    needed: int,
    fit: int,
) -> str:
    queue = facts.queue
    if state == "no-queue":
        return f"queue {queue.name} does not exist"
    if state == "completed":
        return "completed: the gang ran and its pods have finished"
    if state == "never":
        return f"can never run here: {facts.never}"
    if state == "invalid":
        if job.held is not None:
            return f"cannot be scheduled: {job.held[1]} ({job.held[0]})"
        reason, message = (facts.invalid.reason, facts.invalid.message) if facts.invalid else ("", "")
        return f"cannot be scheduled: {message} ({reason})"
    if state == "no-pods":
        admitted = f"not admitted yet, {facts.refusal} says no" if facts.refusal else "the PodGroup is admitted"
        return f"{len(job.tasks)} of {job.min_member} pods exist: {missing} ({admitted})"
    if state == "not-admitted":
        reason = condition.message.split(": ", 1)[-1] if condition is not None else ""
        who = f"enqueue's {facts.refusal} says no" if facts.refusal else "sent back to admission"  # native reclaim
        return f"not admitted: {who}: {reason.removeprefix('PodGroup is pending: ')}"
    if state == "placed":
        return f"the cycle places it now: {facts.placed} pod(s) bound or pipelined"
    if state == "running":
        return "minMember is met; remaining members are placed as room appears" if job.tasks else "nothing is waiting"
    if queue.limit:
        return f"waits for queue quota: {queue.limit}"
    if fit >= needed:
        if queue.overused:
            return f"waits for resources: the tasks fit, but queue {queue.name} is at its deserved share"
        return f"waits for resources: {needed} task(s) needed and {fit} fit now, but the cycle did not place them"
    return f"waits for resources: only {fit} of the {needed} task(s) minMember needs fit now (all or nothing)"
