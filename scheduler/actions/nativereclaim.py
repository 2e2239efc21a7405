"""reclaim on the native backend: whole groups give back what their queues hold above their share.

kube-scheduler places the pods on this backend, so only admission is ours, and so is the
simulation: no node placement, only "would the reclaimer's minResources fit its queue and the
cluster once the victims' resources are freed". Runs after enqueue when the conf lists
``reclaim`` or ``gangreclaim`` (``configure.NATIVE_ACTIONS``), before ``actions.ungate``.

- Reclaimers: groups enqueue left Pending (their pods wait at our queue gate) that only the
  cluster refused (``overcommit``): every other plugin's ``enqueueable`` agrees (proportion or
  capacity: within the queue's deserved share at every level and its capability), their queue
  is not overused, and the plugins let it reclaim for each pending task (``preemptive``). In
  queue order, then job order (priority first).
- Room: what the ready nodes will have free (idle plus releasing, Volcano's FutureIdle) minus
  what admitted groups still reserve (``overcommit.promised``). A reclaimer that fits it needs
  no eviction (enqueue admits it once the releasing pods are gone).
- Victims: running, preemptable pods of other, ``reclaimable`` queues (``reclaim.candidates``),
  one bundle per group holding ALL of its pods (``bundles.whole``): a group is never left
  partly running, and a group that runs a pod no candidate (``preemptable: "false"``) is kept
  whole. Surplus replicas are not taken: on this backend a pod that replaces one joins its
  admitted group at once, so only a group sent back to admission gives its room back. Ordered
  as gangreclaim orders whole bundles (nearest victim queue first where a plugin orders them,
  then the lowest group priority, then the best relief per disruption, then name); the plugins
  of every tier decide which may go (proportion, capacity: the victim queue is above its
  deserved share and keeps its guarantee; conformance: no critical pods).
- Groups are added in that order until the room plus what they free covers the reclaimer's
  minResources (its pending requests when it states none); earlier groups a later one made
  unnecessary are then left out. If even every permitted group is not enough, nothing is
  evicted. Otherwise the evictions are committed, the reclaimer is admitted (Inqueue: ungate
  lifts its gate, kube-scheduler places it once the victims are gone) and each victim group is
  sent back to admission (``Committed.requeued``: Pending, so its replacement pods stay gated).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.actions import bundles, reclaim
from scheduler.api import snapshot
from scheduler.framework import session, statement, tiers
from scheduler.plugins import overcommit

__all__ = ["CLUSTER", "execute", "reclaimers"]

Vector = npt.NDArray[np.float64]
CLUSTER = "overcommit"  # the plugin whose refusal is the cluster's, not the queue's
SETTLE_MOST = 8  # earlier victim groups a successful choice tries to do without
REQUEUED = (
    "PodGroup is pending: its pods were reclaimed for PodGroup {job} of queue {queue}; it waits to be admitted again"
)


def reclaimers(ssn: session.Session, plugins: tiers.Tiers) -> list[str]:
    """Groups enqueue left Pending on the cluster's refusal alone, in queue and job order."""
    jobs = [
        key
        for key, job in ssn.snapshot.jobs.items()
        if ssn.phase[key] == "Pending"
        and ssn.diagnostics.refusals.get(key) == CLUSTER
        and key not in ssn.never
        and job.held is None
        and job.queue in ssn.snapshot.queues
        and any(not t.best_effort for t in ssn.pending_of(key))
    ]
    return sorted(jobs, key=lambda k: (plugins.queue_order(ssn.job(k).queue), plugins.job_order(k)))


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    ready = np.array([n.ready for n in ssn.snapshot.nodes], dtype=bool)
    promised = sum((overcommit.promised(ssn, key) for key in ssn.snapshot.jobs), np.zeros(len(ssn.dims)))
    for job in reclaimers(ssn, plugins):
        mine = ssn.job(job).queue
        pending = [t for t in ssn.pending_of(job) if not t.best_effort]
        if plugins.overused(mine) or not all(plugins.preemptive(mine, t) for t in pending):
            continue
        if plugins.enqueue_refusal(job, ignore=(CLUSTER,)) is not None:
            continue  # its queue would refuse it too: reclaiming would not admit it
        need = _need(ssn, job, pending)
        asked = need > 0
        short = need - (ssn.nodes.future[ready].sum(axis=0) - promised)
        if not asked.any() or np.all(short[asked] <= 0):
            continue
        chosen = _choose(ssn, plugins, job, pending, need, short)
        if chosen is None:
            continue
        victims = {b.job for b in chosen}
        promised += need - sum((overcommit.promised(ssn, v) for v in victims), np.zeros(len(ssn.dims)))
        _commit(ssn, job, chosen)


def _need(ssn: session.Session, job: str, pending: list[snapshot.Task]) -> Vector:
    """The reclaimer's minResources beyond what it holds, or its pending requests without any."""
    info = ssn.job(job)
    if info.min_resources is not None:
        return np.maximum(ssn.vector(info.min_resources) - ssn.allocated.job[job], 0)
    return sum((ssn.vector(t.request) for t in pending), np.zeros(len(ssn.dims)))


def _choose(
    ssn: session.Session, plugins: tiers.Tiers, job: str, pending: list[snapshot.Task], need: Vector, short: Vector
) -> list[bundles.Bundle] | None:
    """The victim groups to evict for ``job`` (see the module docstring), or None."""
    mine = ssn.job(job).queue
    by_job: dict[str, list[snapshot.Task]] = {}
    for task in reclaim.candidates(ssn, mine):
        by_job.setdefault(task.job, []).append(task)
    whole = [b for victim, tasks in sorted(by_job.items()) if (b := bundles.whole(ssn, victim, tasks)) is not None]

    def policy(bundle: bundles.Bundle) -> tuple[object, ...]:
        theirs = ssn.job(bundle.job)
        nearest = plugins.victim_queue_order(theirs.queue, mine) if plugins.orders_victims else ()
        return (nearest, theirs.priority)

    first = bundles.ordered(ssn, whole, need, policy)
    flat = [t for b in first for t in b.tasks]
    permitted = {t.key for t in plugins.victims(pending[0], flat, action="gangreclaim", every_tier=True)}
    valid = bundles.ordered(ssn, bundles.allowed(first, permitted), need, policy)
    asked = short > 0
    chosen: list[bundles.Bundle] = []
    for bundle in valid:
        chosen.append(bundle)
        if _covers(ssn, chosen, short, asked):
            return _settle(ssn, chosen, short, asked)
    return None


def _freed(ssn: session.Session, chosen: list[bundles.Bundle]) -> Vector:
    return sum((ssn.vector(t.request) for b in chosen for t in b.tasks), np.zeros(len(ssn.dims)))


def _covers(ssn: session.Session, chosen: list[bundles.Bundle], short: Vector, asked: npt.NDArray[np.bool_]) -> bool:
    return bool(np.all(_freed(ssn, chosen)[asked] >= short[asked]))


def _settle(
    ssn: session.Session, chosen: list[bundles.Bundle], short: Vector, asked: npt.NDArray[np.bool_]
) -> list[bundles.Bundle]:
    """``chosen`` without the earlier groups (up to ``SETTLE_MOST``) a later one made unnecessary."""
    needed = list(chosen)
    for step in chosen[:-1][:SETTLE_MOST]:
        without = [b for b in needed if b is not step]
        if _covers(ssn, without, short, asked):
            needed = without
    return needed


def _commit(ssn: session.Session, job: str, chosen: list[bundles.Bundle]) -> None:
    """Evict ``chosen`` whole, admit ``job``, send the victim groups back to admission."""
    stmt = statement.Statement(ssn)
    for bundle in chosen:
        theirs = ssn.job(bundle.job).queue
        for victim in bundle.tasks:
            message = f"Reclaimed to make room for PodGroup {job}: {bundle.why}; reclaimed from queue {theirs}"
            stmt.evict(victim.key, reason="Reclaimed", message=message)
    ssn.diagnostics.evictions.setdefault(job, []).extend(stmt.evictions())
    stmt.commit()
    ssn.phase[job] = "Inqueue"
    ssn.diagnostics.refusals.pop(job, None)
    ssn.diagnostics.job_errors.pop(job, None)
    queue = ssn.job(job).queue
    for bundle in chosen:
        ssn.phase[bundle.job] = "Pending"
        ssn.committed.requeued.add(bundle.job)
        ssn.diagnostics.job_errors[bundle.job] = REQUEUED.format(job=job, queue=queue)
