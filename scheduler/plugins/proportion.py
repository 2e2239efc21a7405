"""proportion: queue fair shares by weight, capped by capability and request, floored by guarantee.

Deserved shares are water-filled once per cycle over the queues that have jobs: each round
every unsatisfied queue receives ``remaining × weight / Σ weight``, capped by its real
capability (``total − others' guarantees``, and ``spec.capability``, whose missing dimensions
mean "no cap") and by its request (allocated + pending), floored at its guarantee.

Unlike Volcano (#5814) a queue's ``spec.deserved`` is honoured: on the dimensions it lists, the
queue's deserved is exactly that amount (clamped into [guarantee, real capability]); only the
part it is not requesting right now is lent to the water-filling of the other queues, and
reclaim returns it when the queue asks.

``share = max over dimensions of allocated / deserved`` orders queues (lower first); a queue is
overused when allocated ≥ deserved in every dimension; a task is allocatable while the queue's
allocated + request stays within deserved; reclaim takes only from queues above deserved and
never below guarantee.

On the native backend (kube-scheduler places; no allocate runs here to hold a queue to its
share) the share is kept at admission instead: a group is enqueueable only while its queue's
allocated + what its admitted groups still reserve + its minResources stay within the queue's
deserved, as well as its real capability. A queue alone in the cluster deserves all it asks; a
group waiting for admission asks at least its minResources (its pods may come later).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from bridge import defaults
from scheduler.api import resources, snapshot, tally
from scheduler.framework import config, plugin, session
from scheduler.plugins import overcommit

__all__ = ["EPS", "Proportion", "Vector", "copies_within", "requests", "water_fill"]

Vector = npt.NDArray[np.float64]
EPS = 1e-6  # deserved shares are fractional; allow for float rounding in comparisons


def _capability(queue: snapshot.Queue, dims: tuple[str, ...]) -> Vector:
    cap = np.full(len(dims), np.inf)
    if queue.capability is not None:
        for i, name in enumerate(dims):
            if name in queue.capability.names():
                cap[i] = queue.capability.get(name)
    return cap


def water_fill(
    *,
    total: Vector,
    weights: dict[str, float],
    real_capability: dict[str, Vector],
    request: dict[str, Vector],
    guarantee: dict[str, Vector],
    fixed: dict[str, Vector],
    fixed_mask: dict[str, npt.NDArray[np.bool_]],
) -> dict[str, Vector]:
    """Deserved share per queue (see the module docstring)."""
    deserved = {q: np.where(fixed_mask[q], fixed[q], 0.0) for q in weights}
    remaining = total - sum((np.minimum(deserved[q], request[q]) for q in weights), np.zeros_like(total))
    met: set[str] = set()
    for _ in range(1000):  # converges in a few rounds; the bound only guards against float cycling
        active = [q for q in weights if q not in met]
        total_weight = sum(weights[q] for q in active)
        if total_weight <= 0:
            break
        before = remaining.copy()
        increased, decreased = np.zeros_like(total), np.zeros_like(total)
        for q in active:
            old = deserved[q]
            new = old + np.maximum(remaining, 0) * (weights[q] / total_weight)
            new = np.maximum(np.minimum(np.minimum(new, real_capability[q]), request[q]), guarantee[q])
            new = np.where(fixed_mask[q], old, new)
            deserved[q] = new
            free = ~fixed_mask[q]
            if np.all(request[q][free] <= new[free] + EPS) or np.allclose(new, old):
                met.add(q)
            increased += np.maximum(new - old, 0)
            decreased += np.maximum(old - new, 0)
        remaining = remaining - increased + decreased
        if np.all(remaining <= EPS) or np.allclose(remaining, before):
            break
    return deserved


def requests(ssn: session.Session, queues: Sequence[str]) -> dict[str, Vector]:
    """Per queue, what it holds plus what its pending tasks ask for (summed per job in bulk).

    On the native backend admission holds minResources to the deserved share, so a group still
    waiting for admission asks at least its minResources: its pods may not exist yet (an
    operator makes them later; a Spark driver makes its executors once it runs)."""
    snap = ssn.snapshot
    cols = snap.columns
    waiting = tally.per_job(cols, cols.status == tally.PENDING, ssn.allocated.request_vectors)
    if ssn.config.backend == defaults.NATIVE:
        for i, key in enumerate(cols.jobs):
            info = snap.jobs[key]
            if info.min_resources is not None and ssn.phase[key] == "Pending":
                waiting[i] = np.maximum(waiting[i], ssn.vector(info.min_resources))
    return {q: ssn.allocated.of_queue(q) + waiting[ssn.allocated.queue_jobs.get(q, [])].sum(axis=0) for q in queues}


class Proportion(plugin.Plugin):
    name = "proportion"

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        snap, dims = ssn.snapshot, ssn.dims
        active = sorted({job.queue for job in snap.jobs.values() if job.queue in snap.queues})
        request = requests(ssn, active)
        total = snap.allocatable.sum(axis=0)
        guarantee = {q: resources.vector(snap.queues[q].guarantee, dims) for q in active}
        guaranteed = sum(guarantee.values(), np.zeros(len(dims)))
        self.real_capability = {
            q: np.minimum(total - guaranteed + guarantee[q], _capability(snap.queues[q], dims)) for q in active
        }
        fixed_mask, fixed = {}, {}
        for q in active:
            spec = snap.queues[q].deserved
            names = spec.names() if spec is not None else ()
            fixed_mask[q] = np.array([name in names for name in dims], dtype=bool)
            wanted = resources.vector(spec, dims) if spec is not None else np.zeros(len(dims))
            fixed[q] = np.maximum(np.minimum(wanted, self.real_capability[q]), guarantee[q])
        self.guarantee = guarantee
        self._promised: dict[str, Vector] | None = None
        self._permitted: str | None = None
        self._over_share: set[str] = set()  # refused by the native backend's share check
        self.deserved = water_fill(
            total=total,
            weights={q: float(snap.queues[q].weight) for q in active},
            real_capability=self.real_capability,
            request=request,
            guarantee=guarantee,
            fixed=fixed,
            fixed_mask=fixed_mask,
        )
        self._floats = {q: d.tolist() for q, d in self.deserved.items()}

    def share(self, queue: str) -> float:
        deserved = self._floats.get(queue)
        if deserved is None:
            return 0.0
        # Plain floats: a few dimensions, asked once per allocate turn (same IEEE arithmetic).
        share = 0.0
        for allocated, wanted in zip(self.session.allocated.of_queue(queue).tolist(), deserved, strict=True):
            ratio = allocated / wanted if wanted > 0 else (1.0 if allocated > 0 else 0.0)
            share = max(share, ratio)
        return share

    def queue_order(self, queue: str) -> tuple[Any, ...]:
        return (-self.session.snapshot.queues[queue].priority, self.share(queue))

    def overused(self, queue: str) -> bool:
        deserved = self._floats.get(queue)
        if deserved is None:
            return False
        allocated = self.session.allocated.of_queue(queue).tolist()
        return any(allocated) and all(d <= a + EPS for d, a in zip(deserved, allocated, strict=True))

    def allocatable(self, queue: str, task: snapshot.Task) -> bool:
        deserved = self.deserved.get(queue)
        if deserved is None:
            return True
        req = self.session.vector(task.request)
        asked = req > 0
        after = self.session.allocated.of_queue(queue)[asked] + req[asked]
        return bool(np.all(after <= deserved[asked] + EPS))

    def allocatable_count(self, queue: str, task: snapshot.Task, count: int) -> int:
        deserved = self.deserved.get(queue)
        if deserved is None or count <= 0:
            return count
        # Copy c passes when allocated + c × request ≤ deserved + EPS; amounts are whole numbers,
        # so this is exactly the running sum ``allocatable`` would see, and it is monotone in c.
        # Per dimension: a float estimate of the last passing c, then corrected with the very
        # comparison ``allocatable`` makes (same IEEE arithmetic, so the answer is exact).
        allocated = self.session.allocated.of_queue(queue).tolist()
        return copies_within(allocated, self._floats[queue], self.session.vector(task.request).tolist(), count)

    def enqueueable(self, job: str) -> bool:
        ssn = self.session
        info = ssn.job(job)
        queue = ssn.snapshot.queues.get(info.queue)
        if queue is None or queue.state != "Open":
            return False
        if info.min_resources is None:
            return True
        inqueue = self._inqueue(info.queue)
        want = ssn.vector(info.min_resources)
        asked = want > 0
        total = want + ssn.allocated.of_queue(info.queue) + inqueue
        if not np.all(total[asked] <= self.real_capability[info.queue][asked] + EPS):
            return False
        if ssn.config.backend == defaults.NATIVE and not np.all(total[asked] <= self.deserved[info.queue][asked] + EPS):
            self._over_share.add(job)
            return False
        self._permitted = job
        return True

    def enqueue_message(self, job: str) -> str | None:
        if job not in self._over_share:
            return None
        ssn = self.session
        info = ssn.job(job)
        want = info.min_resources.human() if info.min_resources is not None else "nothing"
        deserved = resources.from_vector(self.deserved[info.queue], ssn.dims).human()
        return (
            f"PodGroup is pending: minResources ({want}) do not fit queue {info.queue}'s deserved share "
            f"({deserved}, weight {ssn.snapshot.queues[info.queue].weight}) beside what it holds and has admitted "
            "(proportion)"
        )

    def _inqueue(self, queue: str) -> Vector:
        """What admitted jobs of ``queue`` still reserve, kept as a running total per queue."""
        ssn = self.session
        if self._promised is None:
            self._promised = {q: np.zeros(len(ssn.dims)) for q in self.deserved}
            for key, job in ssn.snapshot.jobs.items():
                if job.queue in self._promised:
                    self._promised[job.queue] += overcommit.promised(ssn, key)
        elif self._permitted is not None and ssn.phase[self._permitted] == "Inqueue":
            permitted = ssn.job(self._permitted)
            self._promised[permitted.queue] += overcommit.promised(ssn, self._permitted)
        self._permitted = None
        return self._promised.get(queue, np.zeros(len(ssn.dims)))

    def victims(
        self, preemptor: snapshot.Task, candidates: Sequence[snapshot.Task], *, action: str
    ) -> list[snapshot.Task] | None:
        if action not in plugin.RECLAIMS:
            return None
        ssn = self.session
        allocated: dict[str, Vector] = {}
        allowed = []
        for task in candidates:
            queue = ssn.job(task.job).queue
            if queue not in self.deserved:
                continue
            current = allocated.setdefault(queue, ssn.allocated.of_queue(queue).copy())
            req = ssn.vector(task.request)
            over = np.any(current > self.deserved[queue] + EPS)
            keeps_guarantee = np.all(current - req >= self.guarantee[queue] - EPS)
            if over and keeps_guarantee:
                allowed.append(task)
                current -= req
        return allowed


def copies_within(allocated: Sequence[float], limits: Sequence[float], request: Sequence[float], count: int) -> int:
    """How many of ``count`` copies of ``request`` fit on top of ``allocated`` under ``limits``
    (+ ``EPS``), per dimension: a float estimate of the last copy that passes, then corrected
    with the very comparison ``allocatable`` makes (whole amounts: the same sums, the same answer)."""
    for i, amount in enumerate(request):
        if amount <= 0 or limits[i] == np.inf:
            continue
        a, bound = allocated[i], limits[i] + EPS
        c = int(min(count, max(0.0, (bound - a) // amount)))
        while c < count and a + (c + 1) * amount <= bound:
            c += 1
        while c > 0 and a + c * amount > bound:
            c -= 1
        count = c
    return count
