"""capacity: Volcano's elastic queue quotas, and with ``enableHierarchy: true`` its queue tree.

Each queue (with the hierarchy, each node of ``api.queuetree``: a job's queue and every ancestor
up to ``root``) has the figures of ``plugins.levels``: capability, real capability, guarantee,
deserved. A node's allocation is the sum of its leaves', so a pod counts against every level
above it. As in Volcano's ``capacity`` plugin:

- allocatable: the queue is Open and, at its own level and every ancestor's, allocated + the
  task's request stays within the real capability (on the dimensions the task asks for): a
  queue may go past its deserved share into what others do not use, up to its capability;
- enqueueable: the same for minResources + allocated + what admitted groups still reserve; on
  the native backend (no allocate there to hold a queue to its share) also within each level's
  ``levels.admission_bounds``: its deserved plus what its siblings deserve and do not ask for,
  at every level from the queue up to root, and the condition names the level that refuses;
- queue order: priority, then leaves before other nodes, then the shares (max over deserved
  dimensions of allocated / deserved, 1 for a node that deserves nothing) of the two nodes
  under the nearest common ancestor, level by level from the top; the shares move as any queue
  allocates, so queues take turns pod by pod (``shared_queue_order``, ``interleaves``);
- reclaim: a queue may reclaim for a task while allocated + request is within its real
  capability and within its deserved on some requested dimension (``preemptive``). A victim's
  queue must keep its guarantee and be above its deserved on a dimension the victim holds (or
  deserve nothing the victim holds); with ``ancestorReclaimLevel: N`` its ancestors up to N levels
  above that differ from the reclaimer's must be above theirs too. Victims in the queues nearest
  the reclaimer in the tree go first (``victim_queue_order``): siblings, then cousins, then farther.

Jobs go to leaf queues only. A job in a queue with children, in a queue with no place in the
tree (a missing parent, a cycle, bad annotations), or in ``root`` is refused: not admitted, not
placed, with a condition that says why. Volcano instead stops the whole session on such a tree;
we refuse only the groups concerned, so one bad Queue does not stop every other team.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from bridge import defaults
from scheduler.api import queuetree, resources, snapshot
from scheduler.framework import config, plugin, session
from scheduler.plugins import levels, overcommit, proportion

__all__ = ["EPS", "NOT_LEAF", "NO_PLACE", "SHARE", "Capacity", "Vector"]

Vector = npt.NDArray[np.float64]
EPS = 1e-6
NOT_LEAF = "NotLeafQueue"
NO_PLACE = "QueueNotInTree"
SHARE = "deserved share at admission"  # its deserved, or more where its siblings do not ask for theirs


def _flat(queues: Mapping[str, snapshot.Queue]) -> queuetree.Tree:
    """Without the hierarchy: every queue directly under root (a Queue named root stays root)."""
    below = tuple(sorted(q for q in queues if q != queuetree.ROOT))
    virtual = frozenset() if queuetree.ROOT in queues else frozenset({queuetree.ROOT})
    return queuetree.Tree(dict.fromkeys(below, queuetree.ROOT), {queuetree.ROOT: below}, {}, {}, virtual)


class Capacity(plugin.Plugin):
    name = "capacity"
    interleaves = True

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        snap = ssn.snapshot
        self.hierarchy = option.hierarchy
        self.shared_queue_order = option.hierarchy
        self.reclaim_level = max(0, int(option.number("ancestorReclaimLevel", 0))) if option.hierarchy else 0
        self.tree = queuetree.build(snap.queues) if option.hierarchy else _flat(snap.queues)
        total = snap.allocatable.sum(axis=0)
        self.levels = levels.levels(self.tree, snap.queues, total, ssn.dims, flat=not option.hierarchy)
        # The levels a queue's pods count against, leaf first: with the hierarchy up to root.
        self.chain = {
            q: tuple(reversed(self.tree.path(q)[1 if not option.hierarchy else 0 :]))
            for q in snap.queues
            if q in self.tree.parent
        }
        self.leaves = {node: [q for q in self.tree.leaves_under(node) if q in snap.queues] for node in self.levels}
        self._mask = np.array([d != resources.PODS for d in ssn.dims], dtype=bool)
        self._promised: dict[str, Vector] | None = None
        self._permitted: str | None = None
        self.bounds: dict[str, Vector] = {}  # native backend: what each level may hold and have admitted
        self._over_share: dict[str, str] = {}  # native backend: job → the level whose share refused it
        if ssn.config.backend == defaults.NATIVE:
            asked = proportion.requests(ssn, list(snap.queues))
            zero = np.zeros(len(ssn.dims))
            request = {node: sum((asked[q] for q in self.leaves[node]), zero) for node in self.levels}
            self.bounds = levels.admission_bounds(self.tree, self.levels, request, total)

    # --- figures ----------------------------------------------------------------------------
    def allocated(self, node: str) -> Vector:
        of_queue = self.session.allocated.of_queue
        return sum((of_queue(q) for q in self.leaves.get(node, ())), np.zeros(len(self.session.dims)))

    def share(self, node: str) -> float:
        level = self.levels.get(node)
        if level is None or not level.stated:
            return 1.0  # deserves nothing: best-effort, after every queue below its share
        allocated, deserved = self.allocated(node), level.deserved
        has = deserved > 0
        return float(np.max(allocated[has] / deserved[has]))

    def refusal(self, queue: str) -> tuple[str, str] | None:
        """(reason, message) when jobs in ``queue`` may not be scheduled at all, else None."""
        if queue in self.tree.broken:
            return NO_PLACE, f"queue {queue} has no place in the queue tree: {self.tree.broken[queue]}"
        if queue == queuetree.ROOT and self.hierarchy:
            return NOT_LEAF, f"queue {queue} is the root of the queue tree and takes no jobs; submit to a leaf queue"
        if queue in self.chain and not self.tree.is_leaf(queue):
            leaves = ", ".join(self.tree.label(q) for q in self.tree.leaves_under(queue))
            return NOT_LEAF, f"queue {queue} is not a leaf queue: only leaf queues take jobs (its leaves: {leaves})"
        return None

    def limiting(self, queue: str, want: Vector, reserved: bool) -> tuple[str, Vector, Vector] | None:
        """The highest level, from the queue up, where ``want`` more (plus, when ``reserved``, what
        admitted groups still reserve) would pass the real capability: (node, use, real). The
        highest, since a level's real capability bounds every one below it: that is the cause."""
        asked = want > 0
        found = None
        for node in self.chain.get(queue, ()):
            use = self.allocated(node) + (self._reserved(node) if reserved else 0)
            real = self.levels[node].real
            if np.any(use[asked] + want[asked] > real[asked] + EPS):
                found = node, use, real
        return found

    def over_share(self, queue: str, want: Vector) -> tuple[str, Vector, Vector] | None:
        """Native backend: the highest level below root where ``want`` more, beside what it holds
        and has admitted, would pass its ``bounds`` (its share at admission): (node, use, bound)."""
        asked = want > 0
        found = None
        for node in self.chain.get(queue, ()):
            if node not in self.tree.parent:
                continue  # root: its bound is its real capability, which ``limiting`` checks
            use = self.allocated(node) + self._reserved(node)
            if np.any(use[asked] + want[asked] > self.bounds[node][asked] + EPS):
                found = node, use, self.bounds[node]
        return found

    def _describe(self, queue: str, want: Vector, reserved: bool, what: str) -> str | None:
        found = self.limiting(queue, want, reserved)
        return self._words(queue, want, found, what, "real capability") if found is not None else None

    def _words(self, queue: str, want: Vector, found: tuple[str, Vector, Vector], what: str, limit: str) -> str:
        node, use, bound = found
        dims = self.session.dims
        over = [i for i in range(len(dims)) if want[i] > 0 and use[i] + want[i] > bound[i] + EPS]
        figures = ", ".join(
            f"{dims[i]} {resources.human(dims[i], use[i])} + {resources.human(dims[i], want[i])} > "
            f"{resources.human(dims[i], bound[i])}"
            for i in over
        )
        where = "its own" if node == queue else f"its ancestor {self.tree.label(node)}'s"
        path = "/".join(self.tree.label(n) for n in self.tree.path(queue))
        return f"{what} of queue {queue} would exceed {where} {limit} ({figures}; capacity, tree {path})"

    # --- hooks --------------------------------------------------------------------------------
    def job_valid(self, job: str) -> plugin.Invalid | None:
        refused = self.refusal(self.session.job(job).queue)
        return plugin.Invalid(*refused) if refused is not None else None

    def queue_order(self, queue: str) -> tuple[Any, ...]:
        info = self.session.snapshot.queues[queue]
        if not self.hierarchy or queue not in self.chain:
            return (-info.priority, self.share(queue), not self._stated(queue))
        path = self.tree.path(queue)[1:]
        return (-info.priority, not self.tree.is_leaf(queue), *((self.share(n), not self._stated(n)) for n in path))

    def _stated(self, node: str) -> bool:
        level = self.levels.get(node)
        return level is not None and level.stated

    def allocatable(self, queue: str, task: snapshot.Task) -> bool:
        info = self.session.snapshot.queues.get(queue)
        if info is None or info.state != "Open" or self.refusal(queue) is not None:
            return False
        return self.limiting(queue, self.session.vector(task.request), reserved=False) is None

    def allocatable_message(self, queue: str, task: snapshot.Task) -> str | None:
        info = self.session.snapshot.queues.get(queue)
        if info is not None and info.state != "Open":
            return f"queue {queue} is {info.state}: capacity places no pods in it"
        refused = self.refusal(queue)
        if refused is not None:
            return refused[1]
        return self._describe(queue, self.session.vector(task.request), False, "the pod")

    def allocatable_count(self, queue: str, task: snapshot.Task, count: int) -> int:
        if count <= 0 or not self.allocatable(queue, task):
            return 0
        req = self.session.vector(task.request).tolist()
        for node in self.chain.get(queue, ()):  # every level of the tree holds
            count = proportion.copies_within(self.allocated(node).tolist(), self.levels[node].real.tolist(), req, count)
        return count

    def enqueueable(self, job: str) -> bool:
        ssn = self.session
        info = ssn.job(job)
        queue = ssn.snapshot.queues.get(info.queue)
        if queue is None or queue.state != "Open" or self.refusal(info.queue) is not None:
            return False
        if info.min_resources is None:
            return True
        self._reserved(info.queue)  # bring the running totals up to date first
        want = ssn.vector(info.min_resources)
        if self.limiting(info.queue, want, reserved=True) is not None:
            return False
        if self.bounds:
            over = self.over_share(info.queue, want)
            if over is not None:
                self._over_share[job] = self._words(info.queue, want, over, "minResources", SHARE)
                return False
        self._permitted = job
        return True

    def enqueue_message(self, job: str) -> str | None:
        ssn = self.session
        info = ssn.job(job)
        refused = self.refusal(info.queue)
        if refused is not None:
            return refused[1]
        if info.min_resources is None:
            return None
        found = self._describe(info.queue, ssn.vector(info.min_resources), True, "minResources")
        found = found or self._over_share.get(job)
        return f"PodGroup is pending: {found}" if found else None

    def _reserved(self, node: str) -> Vector:
        """What admitted groups under ``node`` still reserve: running totals per leaf queue."""
        ssn = self.session
        if self._promised is None:
            self._promised = {q: np.zeros(len(ssn.dims)) for q in ssn.snapshot.queues}
            for key, job in ssn.snapshot.jobs.items():
                if job.queue in self._promised:
                    self._promised[job.queue] += overcommit.promised(ssn, key)
        elif self._permitted is not None and ssn.phase[self._permitted] == "Inqueue":
            permitted = ssn.job(self._permitted)
            self._promised[permitted.queue] += overcommit.promised(ssn, self._permitted)
        self._permitted = None
        promised = self._promised
        return sum((promised[q] for q in self.leaves.get(node, ()) if q in promised), np.zeros(len(ssn.dims)))

    def preemptive(self, queue: str, task: snapshot.Task) -> bool:
        if self.refusal(queue) is not None or queue not in self.chain:
            return False
        req = self.session.vector(task.request)
        asked = (req > 0) & self._mask
        future = self.allocated(queue) + req
        if np.any(future[req > 0] > self.levels[queue].real[req > 0] + EPS):
            return False
        if self._within_deserved(queue, future, asked):
            return True
        ancestors = self.chain[queue][1:]
        for depth in range(1, self.reclaim_level + 1):
            if depth <= len(ancestors) and ancestors[depth - 1] != queuetree.ROOT:
                node = ancestors[depth - 1]
                if self._within_deserved(node, self.allocated(node) + req, asked):
                    return True
        return False

    def _within_deserved(self, node: str, future: Vector, asked: npt.NDArray[np.bool_]) -> bool:
        deserved = self.levels[node].deserved
        relevant = asked & ~((future < EPS) & (deserved < EPS))
        return bool(np.any(future[relevant] <= deserved[relevant] + EPS))

    def victim_queue_order(self, queue: str, preemptor_queue: str) -> tuple[Any, ...] | None:
        if not self.hierarchy:
            return None
        mine, theirs = self.tree.path(preemptor_queue), self.tree.path(queue)
        shared = 0
        while shared < min(len(mine), len(theirs)) and mine[shared] == theirs[shared]:
            shared += 1
        return (-shared,)  # the deeper the nearest common ancestor, the sooner

    def victims(
        self, preemptor: snapshot.Task, candidates: Sequence[snapshot.Task], *, action: str
    ) -> list[snapshot.Task] | None:
        if action not in plugin.RECLAIMS:
            return None
        ssn = self.session
        reclaimer = ssn.job(preemptor.job).queue
        if self.refusal(reclaimer) is not None or reclaimer not in self.chain:
            return []
        wanted = ssn.vector(preemptor.request) > 0
        mine = self.chain[reclaimer]
        allocated: dict[str, Vector] = {}
        allowed = []
        ordered = sorted(candidates, key=lambda t: self.victim_queue_order(ssn.job(t.job).queue, reclaimer) or ())
        for task in ordered:
            queue = ssn.job(task.job).queue
            if queue not in self.chain:
                continue
            req = ssn.vector(task.request)
            if not np.any((req > 0) & wanted & self._mask):
                continue  # holds nothing the reclaimer asks for
            current = allocated.setdefault(queue, self.allocated(queue).copy())
            if np.any(current - req < self.levels[queue].guarantee - EPS):
                continue
            deserved = self.levels[queue].deserved
            relevant = (req > 0) & (deserved > 0) & self._mask
            if not np.any(relevant):  # deserves nothing the victim holds: a victim at once, but
                if self.reclaim_level and not self._deserved(reclaimer, preemptor, queue):
                    continue  # ... not for a reclaimer that deserves nothing it asks, close by
            elif not np.any(current[relevant] > deserved[relevant] + EPS):
                continue
            checked = self._ancestors_to_check(mine, self.chain[queue])
            for node in checked:
                allocated.setdefault(node, self.allocated(node).copy())
            if not all(self._above_deserved(node, allocated[node], req) for node in checked):
                continue
            for node in (queue, *checked):
                allocated[node] -= req
            allowed.append(task)
        return allowed

    def _above_deserved(self, node: str, current: Vector, req: Vector) -> bool:
        """The node holds more than it deserves on a dimension ``req`` holds, or deserves none of them."""
        deserved = self.levels[node].deserved
        relevant = (req > 0) & (deserved > 0) & self._mask
        return not np.any(relevant) or bool(np.any(current[relevant] > deserved[relevant] + EPS))

    def _deserved(self, reclaimer: str, preemptor: snapshot.Task, victim_queue: str) -> bool:
        """Volcano's guard against reclaim without contention: within ``ancestorReclaimLevel``
        levels of a shared non-root ancestor, the reclaimer's queue must deserve something it asks."""
        mine = set(self.chain[reclaimer][1 : self.reclaim_level + 1]) - {queuetree.ROOT}
        theirs = set(self.chain[victim_queue][1 : self.reclaim_level + 1])
        if not mine & theirs:
            return True
        req = self.session.vector(preemptor.request)
        return bool(np.any((req > 0) & (self.levels[reclaimer].deserved > 0) & self._mask))

    def _ancestors_to_check(self, mine: tuple[str, ...], theirs: tuple[str, ...]) -> list[str]:
        """The victim's ancestors, 1 to ``ancestorReclaimLevel`` levels up, that are not root and
        not the reclaimer's ancestor at the same distance."""
        out = []
        for depth in range(1, self.reclaim_level + 1):
            if depth >= len(theirs) or theirs[depth] == queuetree.ROOT:
                continue
            if depth < len(mine) and mine[depth] == theirs[depth]:
                continue
            out.append(theirs[depth])
        return out
