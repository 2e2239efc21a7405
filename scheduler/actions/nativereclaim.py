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

The bundles are built once per cycle and ordered once per (queue, need); each reclaimer asks the
plugins about a doubling prefix of that order only (``_Pool``), so a cycle with many reclaimers
stays near linear in the groups it looks at.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.actions import bundles, reclaim
from scheduler.api import snapshot
from scheduler.framework import session, statement, tiers
from scheduler.plugins import overcommit

__all__ = ["CLUSTER", "REQUEUED", "SETTLE_MOST", "Vector", "execute", "reclaimers"]

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
    pool = _Pool(ssn, plugins)
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
        if not asked.any() or np.all(short[asked] <= 0) or pool.hopeless(mine, short):
            continue
        chosen = pool.choose(job, pending[0], need, short)
        if chosen is None:
            pool.failed(mine, short)
            continue
        victims = {b.job for b in chosen}
        promised += need - sum((overcommit.promised(ssn, v) for v in victims), np.zeros(len(ssn.dims)))
        _commit(ssn, job, chosen)
        pool.gone |= victims


def _need(ssn: session.Session, job: str, pending: list[snapshot.Task]) -> Vector:
    """The reclaimer's minResources beyond what it holds, or its pending requests without any."""
    info = ssn.job(job)
    if info.min_resources is not None:
        return np.maximum(ssn.vector(info.min_resources) - ssn.allocated.job[job], 0)
    return sum((ssn.vector(t.request) for t in pending), np.zeros(len(ssn.dims)))


class _Pool:
    """The whole bundles of the cycle, built once: every group of a reclaimable queue whose running
    pods are all candidates. Ordered once per (reclaimer queue, need), groups evicted since
    (``gone``) skipped; the plugins are asked about a growing prefix of that order only (their
    ``victims`` hooks decide each candidate from the ones before it, so a prefix gets the answers
    the whole list would), doubling until the permitted groups cover the shortfall or none are
    left. A queue that found too little for a shortfall finds too little for a larger one later
    in the cycle (victims only get fewer): ``hopeless``."""

    def __init__(self, ssn: session.Session, plugins: tiers.Tiers) -> None:
        self.ssn, self.plugins = ssn, plugins
        by_job: dict[str, list[snapshot.Task]] = {}
        for task in reclaim.candidates(ssn, None):
            by_job.setdefault(task.job, []).append(task)
        self.whole = [b for job, tasks in sorted(by_job.items()) if (b := bundles.whole(ssn, job, tasks)) is not None]
        self.gone: set[str] = set()
        self._orders: dict[tuple[str, bytes], list[bundles.Bundle]] = {}
        self._start: dict[tuple[str, bytes], int] = {}  # where each order's bundles not yet gone begin
        self._failed: dict[str, list[Vector]] = {}

    def hopeless(self, queue: str, short: Vector) -> bool:
        return any(np.all(short >= before) for before in self._failed.get(queue, ()))

    def failed(self, queue: str, short: Vector) -> None:
        self._failed.setdefault(queue, []).append(short)

    def _ordered(self, mine: str, need: Vector) -> tuple[str, bytes]:
        """The key of the order of the bundles for a reclaimer of ``mine`` needing ``need``."""
        key = (mine, need.tobytes())
        if key not in self._orders:
            ssn, plugins = self.ssn, self.plugins

            def policy(bundle: bundles.Bundle) -> tuple[object, ...]:
                theirs = ssn.job(bundle.job)
                nearest = plugins.victim_queue_order(theirs.queue, mine) if plugins.orders_victims else ()
                return (nearest, theirs.priority)

            others = [b for b in self.whole if ssn.job(b.job).queue != mine]
            self._orders[key] = bundles.ordered(ssn, others, need, policy)
            self._start[key] = 0
        return key

    def _take(self, key: tuple[str, bytes], size: int) -> tuple[list[bundles.Bundle], bool]:
        """The first ``size`` bundles of the order that are not ``gone``; whether that is all of them."""
        order, i = self._orders[key], self._start[key]
        while i < len(order) and order[i].job in self.gone:  # taken from the front: skipped for good
            i += 1
        self._start[key] = i
        out: list[bundles.Bundle] = []
        while i < len(order) and len(out) < size:
            if order[i].job not in self.gone:
                out.append(order[i])
            i += 1
        return out, i >= len(order)

    def choose(self, job: str, preemptor: snapshot.Task, need: Vector, short: Vector) -> list[bundles.Bundle] | None:
        """The victim groups to evict for ``job`` (module docstring), or None."""
        ssn = self.ssn
        key = self._ordered(ssn.job(job).queue, need)
        asked = short > 0
        size = 1
        while True:
            prefix, whole = self._take(key, size)
            flat = [t for b in prefix for t in b.tasks]
            permitted = {t.key for t in self.plugins.victims(preemptor, flat, action="gangreclaim", every_tier=True)}
            chosen: list[bundles.Bundle] = []
            freed = np.zeros(len(ssn.dims))
            for bundle in bundles.allowed(prefix, permitted):
                chosen.append(bundle)
                freed += _freed(ssn, bundle)
                if np.all(freed[asked] >= short[asked]):
                    return _settle(ssn, chosen, freed, short, asked)
            if whole:
                return None
            size *= 2


def _freed(ssn: session.Session, bundle: bundles.Bundle) -> Vector:
    return sum((ssn.vector(t.request) for t in bundle.tasks), np.zeros(len(ssn.dims)))


def _settle(
    ssn: session.Session, chosen: list[bundles.Bundle], freed: Vector, short: Vector, asked: npt.NDArray[np.bool_]
) -> list[bundles.Bundle]:
    """``chosen`` (freeing ``freed``) without the earlier groups, up to ``SETTLE_MOST``, that a
    later one made unnecessary."""
    needed = list(chosen)
    for step in chosen[:-1][:SETTLE_MOST]:
        without = freed - _freed(ssn, step)
        if np.all(without[asked] >= short[asked]):
            needed.remove(step)
            freed = without
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
