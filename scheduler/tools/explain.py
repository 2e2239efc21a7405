"""Why a PodGroup waits: facts computed from a Snapshot with the cycle's own plugins. Pure.

``explain(snapshot, config, "ns/name") -> Explanation`` answers, for the group's pending
tasks as the cluster stands in the snapshot:

- how many nodes fail each predicate (not ready, cordoned, selector/affinity, taints,
  anti-affinity, and each resource against idle capacity), per distinct task shape;
- the best partial fit: how many pending tasks would fit right now and on which nodes,
  placed one after another on idle resources exactly as ``allocate`` scores nodes (the queue's
  share is reported separately, not applied);
- the queue: deserved share (proportion's water-filling), what it holds, its share ratio;
- the enqueue verdict for a Pending group: minResources against the overcommitted idle
  capacity minus what admitted (Inqueue) groups still reserve, and the largest reservers;
- what would have to free up: the requests of the tasks that do not fit, beyond minMember,
  and the part of minResources the cluster has not got.

``render(explanation)`` turns it into the text ``vbridge explain podgroup`` prints.

The session is opened as ``cycle.schedule`` opens it, with the conf's ``fast_paths`` off: the
partial fit is the reference path's, one task after another through ``Placer.place``.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime

import numpy as np
import numpy.typing as npt

from scheduler import cycle, errors
from scheduler.api import resources, snapshot
from scheduler.framework import config, placement, session, statement, tiers
from scheduler.plugins import overcommit, proportion

__all__ = ["Enqueue", "Explanation", "QueueShare", "Shape", "explain", "render"]

Vector = npt.NDArray[np.float64]
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)  # ``now`` only matters to Spark timeouts


@dataclasses.dataclass(frozen=True, slots=True)
class Shape:
    """Pending tasks with one request and placement, and how many nodes refuse them and why."""

    request: resources.Resource
    tasks: int
    failures: tuple[tuple[str, int], ...]  # (reason, nodes), largest first
    feasible_nodes: int  # nodes where one such task fits on idle capacity right now


@dataclasses.dataclass(frozen=True, slots=True)
class QueueShare:
    name: str
    exists: bool
    state: str
    weight: int
    deserved: resources.Resource
    allocated: resources.Resource
    share: float  # max over dimensions of allocated / deserved
    overused: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Enqueue:
    admitted: bool
    min_resources: resources.Resource | None
    idle: resources.Resource  # allocatable × overcommit factor − used, over all nodes
    promised: resources.Resource  # what admitted groups still reserve
    reservers: tuple[tuple[str, resources.Resource], ...]  # the largest of them, by cpu
    shortfall: resources.Resource  # minResources − (idle − promised), positive parts


@dataclasses.dataclass(frozen=True, slots=True)
class Explanation:
    podgroup: str
    phase: str
    min_member: int
    tasks: int
    ready: int
    pending: int
    nodes: int
    shapes: tuple[Shape, ...]
    fit: int  # pending tasks that would fit now, one after another
    needed: int  # more ready tasks minMember asks for
    fit_nodes: tuple[tuple[str, int], ...]  # (node, tasks) of that partial fit
    queue: QueueShare
    enqueue: Enqueue | None  # None once admitted
    free_up: resources.Resource  # requests of the needed tasks that do not fit now
    verdict: str


def explain(snap: snapshot.Snapshot, conf: config.SchedulerConfig, key: str) -> Explanation:
    job = snap.jobs.get(key)
    if job is None:
        raise errors.SchedulerError(f"podgroup {key} not found")
    ssn, plugins = cycle.open_session(snap, dataclasses.replace(conf, fast_paths=False), EPOCH)
    placer = placement.Placer(ssn, plugins)
    pending = [t for t in ssn.pending_tasks(key) if not ssn.task(t).best_effort]
    ready = ssn.counts.ready[key]
    needed = max(job.min_member - ready - ssn.counts.pending_best_effort[key], 0)
    shapes = _shapes(ssn, plugins, placer, pending)
    queue = _queue(ssn, conf, job.queue)
    enqueue = _enqueue(ssn, conf, key) if job.phase == "Pending" else None
    # The partial fit goes through a statement so the session sees each placement; it is
    # thrown away afterwards (nothing here is a decision).
    stmt = statement.Statement(ssn)
    fit_rows: collections.Counter[int] = collections.Counter()
    unfit = np.zeros(len(ssn.dims))
    for task_key in pending:
        choice = placer.place(ssn.task(task_key), pipeline=False)
        if choice is None:
            unfit += ssn.vector(ssn.task(task_key).request)
            continue
        stmt.allocate(task_key, choice[1])
        fit_rows[choice[1]] += 1
    stmt.discard()
    fit = sum(fit_rows.values())
    # Only the shortfall towards minMember must free up; extra members beyond it are optional.
    missing = max(needed - fit, 0)
    per_task = unfit / max(len(pending) - fit, 1)
    free_up = resources.from_vector(np.ceil(per_task * missing), ssn.dims) if missing else resources.Resource()
    nodes = snap.nodes
    return Explanation(
        podgroup=key,
        phase=job.phase,
        min_member=job.min_member,
        tasks=len(job.tasks),
        ready=ready,
        pending=len(pending),
        nodes=len(nodes),
        shapes=shapes,
        fit=fit,
        needed=needed,
        fit_nodes=tuple(sorted(((nodes[r].name, n) for r, n in fit_rows.items()), key=lambda x: (-x[1], x[0]))),
        queue=queue,
        enqueue=enqueue,
        free_up=free_up,
        verdict=_verdict(job, queue, enqueue, needed, fit, len(pending)),
    )


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
        counts[placement.NOT_READY] = int((~placer.ready).sum())
        ok = placer.ready.copy()
        for reason, mask in plugins.predicate(task, placer.rows):
            counts[reason] += int((~mask).sum())
            ok &= mask
        req = ssn.vector(task.request)
        for col in np.flatnonzero(req > 0):
            short = ssn.nodes.idle[:, col] < req[col]
            label = "Too many pods" if ssn.dims[col] == resources.PODS else f"Insufficient {ssn.dims[col]}"
            counts[label] += int(short.sum())
            ok &= ~short
        failures = tuple(sorted(((r, n) for r, n in counts.items() if n), key=lambda x: (-x[1], x[0])))
        out.append(Shape(task.request, len(keys), failures, int(ok.sum())))
    return tuple(out)


def _queue(ssn: session.Session, conf: config.SchedulerConfig, name: str) -> QueueShare:
    info = ssn.snapshot.queues.get(name)
    allocated = ssn.allocated.of_queue(name)
    option = conf.plugin("proportion") or config.PluginOption("proportion")
    plugin = proportion.Proportion(option, ssn)
    deserved = plugin.deserved.get(name, np.zeros(len(ssn.dims)))
    return QueueShare(
        name=name,
        exists=info is not None,
        state=info.state if info is not None else "NotFound",
        weight=info.weight if info is not None else 0,
        deserved=resources.from_vector(deserved, ssn.dims),
        allocated=resources.from_vector(allocated, ssn.dims),
        share=plugin.share(name),
        overused=plugin.overused(name),
    )


def _enqueue(ssn: session.Session, conf: config.SchedulerConfig, key: str) -> Enqueue:
    job = ssn.job(key)
    option = conf.plugin("overcommit") or config.PluginOption("overcommit")
    idle = overcommit.Overcommit(option, ssn).idle
    zero = np.zeros(len(ssn.dims))
    owed = {other: overcommit.promised(ssn, other) for other in ssn.snapshot.jobs if other != key}
    promised: Vector = sum(owed.values(), zero.copy())
    cpu = ssn.dims.index(resources.CPU)
    largest = sorted(((k, v) for k, v in owed.items() if v.any()), key=lambda kv: (-kv[1][cpu], kv[0]))[:5]
    want = ssn.vector(job.min_resources) if job.min_resources is not None else zero
    asked = want > 0
    shortfall = np.where(asked, np.maximum(want + promised - idle, 0), 0)
    admitted = job.min_resources is None or not shortfall.any()
    return Enqueue(
        admitted=admitted,
        min_resources=job.min_resources,
        idle=resources.from_vector(np.maximum(idle, 0), ssn.dims),
        promised=resources.from_vector(promised, ssn.dims),
        reservers=tuple((k, resources.from_vector(v, ssn.dims)) for k, v in largest),
        shortfall=resources.from_vector(shortfall, ssn.dims),
    )


def _verdict(job: snapshot.Job, queue: QueueShare, enqueue: Enqueue | None, needed: int, fit: int, pending: int) -> str:
    if not queue.exists:
        return f"queue {queue.name} does not exist"
    if queue.state != "Open" and job.phase == "Pending":
        return f"queue {queue.name} is {queue.state} and admits no new groups"
    if enqueue is not None and not enqueue.admitted:
        return f"not admitted: minResources do not fit the unreserved capacity (short {enqueue.shortfall})"
    if needed == 0:
        return "minMember is met; remaining members are placed as room appears" if pending else "nothing is waiting"
    if fit >= needed:
        if queue.overused:
            return f"the tasks fit, but queue {queue.name} is at its deserved share"
        return f"{needed} task(s) needed and {fit} fit now: the next cycle should place the gang"
    return f"only {fit} of the {needed} task(s) minMember needs fit now: the gang waits, all or nothing"


def render(exp: Explanation) -> str:
    """The report ``vbridge explain podgroup`` prints."""
    lines = [
        f"PodGroup {exp.podgroup}: phase {exp.phase}, minMember {exp.min_member}, "
        f"{exp.tasks} task(s): {exp.ready} ready, {exp.pending} pending",
        f"verdict: {exp.verdict}",
        "",
        f"nodes ({exp.nodes}) for the pending tasks:",
    ]
    for shape in exp.shapes:
        lines.append(f"  {shape.tasks} task(s) requesting {shape.request}: {shape.feasible_nodes} node(s) fit one now")
        lines += [f"    {n} {reason}" for reason, n in shape.failures]
    where = ", ".join(f"{node}×{n}" for node, n in exp.fit_nodes) or "nowhere"
    lines += [
        "",
        f"best partial fit: {exp.fit} of {exp.pending} pending task(s) fit now ({where}); needed {exp.needed}",
    ]
    q = exp.queue
    lines += [
        "",
        f"queue {q.name} ({q.state}, weight {q.weight}): deserved {q.deserved}; holds {q.allocated}; "
        f"share {q.share:.2f}{' (overused)' if q.overused else ''}",
    ]
    if exp.enqueue is not None:
        e = exp.enqueue
        lines += [
            "",
            f"enqueue: {'admissible' if e.admitted else 'NOT admissible'}: minResources {e.min_resources or 'none'}",
            f"  idle capacity (overcommitted): {e.idle}",
            f"  reserved by admitted groups: {e.promised}",
        ]
        lines += [f"    {group}: {amount}" for group, amount in e.reservers]
        if not e.admitted:
            lines.append(f"  short by: {e.shortfall}")
    if not exp.free_up.is_empty():
        lines += ["", f"to run, at least this must free up on fitting nodes: {exp.free_up}"]
    return "\n".join(lines)
