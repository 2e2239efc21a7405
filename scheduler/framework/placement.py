"""Choose a node for a task: vectorised feasibility and scoring over every node (no sampling).

For each distinct (request, placement) the engine keeps two score arrays over all nodes: ``-inf``
where the task cannot go, its score where it can, against idle resources (→ Allocate) and against
future-idle ones (→ Pipeline). Choosing is an argmax. Plugin node hooks answer per row from that
row's state only, so after the session changes some rows (``Session.changed_rows``) only those
are recomputed: placing the hundredth identical pod costs one row, not one full scan.

``place_many`` places a gang's identical pods in one step with the same result as calling
``place`` and allocating after each: only the ``count`` best rows can be chosen (an untouched
row is only picked once every better untouched row has been), so their scores after 1, 2…
more copies are computed in one vectorised call and the picks are a heap merge over them;
when no row's second copy would beat the last row's first (a spread gang: each refresh scores
a second copy with the first, ``_Entry.second``), the picks are simply those rows, best first.
The best rows come from a per-shape ``ranking.Ranking``. Entries are keyed by what the
row-local hooks read (``Plugin.predicate``, ``Plugin.node_score``): the request and the node
selection (nodeSelector, node affinity, tolerations, the topology keys of required pod affinity
and hard spread constraints), not the pod terms' selectors, so gangs that differ only in those
share one entry. ``on_future`` is brought up to date only when a task may be pipelined.

A topological task (pod affinity, anti-affinity, topology spread: ``Tiers.topological``) keeps
its entry for what is local to a row; on each ``place`` the domain checks and scores are added
over every row, and ``place_many`` never batches it: each copy changes where the next may go.
Four kinds of run are placed in one step all the same, with ``place``'s choices: one kept a pod
per node by its own hostname anti-affinity (``place_apart``, see ``apart``), one its own pod
affinity holds in one domain (``together``, ``place_many_within``), one whose one domain check is
hard spread on its own pods (``place_counted``, see ``counted``), and one that domain scores
alone follow (``place_scored``, see ``scored``).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from scheduler.api import snapshot
from scheduler.framework import apart, counted, feasibility, lookahead, ranking, scored, session, tiers, together

__all__ = ["ALLOCATE", "PIPELINE", "Placer", "Scores", "Vector"]

ALLOCATE = "allocate"
PIPELINE = "pipeline"

Scores = npt.NDArray[np.float64]
Vector = npt.NDArray[np.float64]


@dataclasses.dataclass(slots=True)
class _Entry:
    on_idle: Scores
    on_future: Scores  # up to date only after ``Placer._future``: allocating never reads it
    score: Scores  # the plugins' score per row, fitting or not
    ok: npt.NDArray[np.bool_]  # ready and passing every predicate
    seen: int  # length of Session.changed_rows when last refreshed
    # The request over every dimension, and the floor a row's free amounts must reach: the
    # request where asked, -inf elsewhere, so ``(free >= floor).all(axis=1)`` checks only the
    # dimensions the task asks for (a dimension it does not ask for may be overcommitted).
    # ``floors`` holds it for a first copy and, above it by the request, for a second (2 × dims).
    req: Vector
    floors: npt.NDArray[np.float64]
    # A second copy's score per row over a first (-inf where the two do not fit on idle or the
    # row fails a predicate): scored with the first in one call, so a spread gang needs no look-ahead.
    second: Scores
    ranking: ranking.Ranking | None = None  # rows that fit on idle, for place_many; built on first use
    future_due: npt.NDArray[np.bool_] | None = None  # rows refreshed since on_future last was

    @property
    def floor(self) -> Vector:
        """The floor for one copy."""
        floor: Vector = self.floors[0]
        return floor


class Placer:
    def __init__(self, ssn: session.Session, plugins: tiers.Tiers) -> None:
        self.session = ssn
        self.plugins = plugins
        self.rows = np.arange(len(ssn.snapshot.nodes), dtype=np.intp)
        self.ready = np.array([n.ready for n in ssn.snapshot.nodes], dtype=bool)
        self._all_ready = bool(self.ready.all())
        self._cache: dict[int, _Entry] = {}  # by ``_local`` key
        self._local: dict[int, int] = {}  # Task.shape → its entry's key
        self._locals: dict[tuple[object, ...], int] = {}
        self.copies = lookahead.Copies()

    def place(self, task: snapshot.Task, *, pipeline: bool = True) -> tuple[str, int] | None:
        """(ALLOCATE or PIPELINE, node row) for the best node, or None if none fits."""
        if not len(self.rows):
            return None
        entry = self._entry(task)
        if self.plugins.topological(task):
            return self._place_topological(task, entry, pipeline)
        row = int(entry.on_idle.argmax())
        if entry.on_idle[row] > -np.inf:
            return ALLOCATE, row
        if pipeline:
            self._future(entry)
            row = int(entry.on_future.argmax())
            if entry.on_future[row] > -np.inf:
                return PIPELINE, row
        return None

    def place_many(self, task: snapshot.Task, count: int) -> list[int]:
        """Rows for up to ``count`` copies of ``task``, each allocated before the next is placed.

        Stops at the first copy no idle node can take (the caller goes one by one from there,
        pipelining included). Exactly ``place``'s choices: same scores, ties to the lower row.
        Topological tasks are not batched: each copy changes where the next may go.
        """
        if count <= 0 or not len(self.rows) or self.plugins.topological(task):
            return []
        entry = self._entry(task)
        rank = entry.ranking
        if rank is None:
            rank = entry.ranking = ranking.Ranking(len(self.rows), entry.on_idle)
        mask = rank.mask
        best = [key & mask for key in rank.take(count)]
        return self._copies(task, entry, best, count) if best else []

    def place_many_within(self, task: snapshot.Task, rows: npt.NDArray[np.bool_], count: int) -> list[int]:
        """``place_within`` then allocate, up to ``count`` times in one step (``place_many``'s
        choices with only ``rows`` open: see ``together``); stops where no row of them fits."""
        entry = self._entry(task)
        best = apart.best_rows(entry.on_idle, rows, count) if count > 0 else []
        return self._copies(task, entry, best, count) if best else []

    def _copies(self, task: snapshot.Task, entry: _Entry, order: list[int], count: int) -> list[int]:
        """Rows for ``count`` copies of ``task`` given the best rows that fit, best first (by
        score, then row): an untouched row is only picked once every better untouched row has
        been, so only these can be; their scores after more copies merge in one heap."""
        rows = np.fromiter(order, dtype=np.intp, count=len(order))
        scores = entry.on_idle[rows].tolist()
        if len(order) == count and count > 1 and bool((entry.second.take(rows) < scores[-1]).all()):
            # No row's second copy scores as high as the last row's first: one copy per row,
            # best first (what the merge below would pick, without its loop).
            return order
        ahead = lookahead.Lookahead(self, task, entry.req, entry.floor, rows, count)
        # order is by (-score, row), so with the index appended it is already a heap.
        heap = [(-score, row, i) for i, (score, row) in enumerate(zip(scores, order, strict=True))]
        picks: list[int] = []
        while heap and len(picks) < count:
            _, row, i = heapq.heappop(heap)
            picks.append(row)
            nxt = ahead.after(i, count - len(picks))
            if nxt is not None:
                heapq.heappush(heap, (-nxt, row, i))
        return picks

    def place_apart(self, tasks: list[snapshot.Task], count: int) -> list[int]:
        """Rows for up to ``count`` of ``tasks`` (one run) kept one per node by their own hostname
        anti-affinity (``apart.eligible``), each allocated before the next is placed: exactly
        ``place``'s choices one by one, from one look at the domain checks (see ``apart``).

        Empty when the run does not qualify; stops at the first copy no idle node can take.
        """
        task = tasks[0]
        if count <= 0 or not len(self.rows) or not apart.eligible(self.session.topology, tasks):
            return []
        entry = self._entry(task)
        ok = self._domain_ok(task)
        fits = entry.on_idle > -np.inf
        if self.plugins.domain_score(task, fits if ok is None else fits & ok) is not None:
            return []  # scored by domain too: each copy moves the next one's scores
        rank = entry.ranking  # the same order, when place_many keeps one for the entry
        if ok is not None and rank is not None:
            keys = rank.take_where(count, ok, limit=4 * count + 64)
            if keys is not None:
                return [key & rank.mask for key in keys]
        return apart.best_rows(entry.on_idle, ok, count)

    def place_counted(self, tasks: list[snapshot.Task], count: int) -> list[int]:
        """Rows for up to ``count`` of ``tasks`` (one run) whose one domain plugin gives a rule
        that follows them (``Tiers.domain_rule``: hard topology spread on the run's own pods),
        each allocated before the next is placed: ``place``'s choices one by one, see ``counted``.

        Empty when the run does not qualify; stops at the first copy no idle node can take.
        """
        task = tasks[0]
        if count <= 0 or not len(self.rows) or not apart.alike(tasks):
            return []
        found = self.plugins.domain_rule(task)
        if found is None:
            return []
        static, rule = found
        entry = self._entry(task)
        scores = np.where(np.logical_and.reduce(static), entry.on_idle, -np.inf) if static else entry.on_idle

        def ahead(rows: npt.NDArray[np.intp]) -> lookahead.Lookahead:
            return lookahead.Lookahead(self, task, entry.req, entry.floor, rows, count)

        return counted.place(scores, self.session.topology.rows_of(rule.key), rule, count, ahead)

    def place_each(self, tasks: list[snapshot.Task], allocate: Callable[[snapshot.Task, int], None]) -> int:
        """``place`` on idle then ``allocate`` for each of ``tasks`` (one run, alike in namespace and
        labels), the entry read once: only the rows the run takes change, rescored as they go.
        Stops at the first copy no idle row takes; how many it placed."""
        task = tasks[0]
        if not apart.alike(tasks):
            return 0
        entry = self._entry(task)
        scores = entry.on_idle.copy()
        rescore = lookahead.rescorer(self, task, entry.second, entry.req, entry.floor)
        for n, copy in enumerate(tasks):
            row = self._best(task, scores, self._domain_ok(task))
            if row is None:
                return n
            allocate(copy, row)
            scores[row] = rescore(row)
        return len(tasks)

    def place_scored(
        self, tasks: list[snapshot.Task], count: int, allocate: Callable[[snapshot.Task, int], None]
    ) -> int:
        """``place_each`` for up to ``count`` of ``tasks`` when the run's domain hooks split into
        parts (``Tiers.domain_split``), from a few candidate rows: see ``scored``. How many it
        placed (0: the run does not qualify); the long way goes on from there."""
        task = tasks[0]
        if count <= 0 or not len(self.rows) or not apart.alike(tasks):
            return 0
        parts = self.plugins.domain_split(task)
        if parts is None:
            return 0
        entry = self._entry(task)
        rescore = lookahead.rescorer(self, task, entry.second, entry.req, entry.floor)
        topo = self.session.topology
        return scored.place(entry.on_idle.copy(), parts, topo, count, lambda n, row: allocate(tasks[n], row), rescore)

    def together(self, tasks: list[snapshot.Task]) -> npt.NDArray[np.bool_] | None:
        """The rows the run's next copies may take (``place_within``) when its required pod
        affinity holds it in one domain (``together``), else None."""
        key = together.key(tasks)
        if key is None or not len(self.rows):
            return None
        task = tasks[0]
        entry = self._entry(task)
        ok = self._domain_ok(task)
        if ok is None:
            return None
        feasible = (entry.on_idle > -np.inf) & ok
        rows = together.within(self.session.topology, key, feasible, ok)
        if rows is None:
            return None
        score = self.plugins.domain_score(task, feasible)
        return rows if score is None or not score[feasible].any() else None

    def place_within(self, task: snapshot.Task, rows: npt.NDArray[np.bool_]) -> int | None:
        """The best row by node score among ``rows`` that fits on idle (``together``), or None."""
        scores = np.where(rows, self._entry(task).on_idle, -np.inf)
        row = int(scores.argmax())
        return row if scores[row] > -np.inf else None

    def _domain_ok(self, task: snapshot.Task) -> npt.NDArray[np.bool_] | None:
        ok: npt.NDArray[np.bool_] | None = None
        for _, mask in self.plugins.domain_predicate(task):
            ok = mask if ok is None else ok & mask
        return ok

    def feasible(self, task: snapshot.Task) -> npt.NDArray[np.bool_]:
        """Rows that pass every predicate, ignoring resources (for preempt and reclaim)."""
        ok = self.ready.copy()
        for _, mask in self.checks(task):
            ok &= mask
        return ok

    def checks(self, task: snapshot.Task) -> list[tuple[str, npt.NDArray[np.bool_]]]:
        """Every predicate's (reason, passes) over every row, the domain ones included."""
        checks = self.plugins.predicate(task, self.rows)
        if self.plugins.topological(task):
            checks += self.plugins.domain_predicate(task)
        return checks

    def _place_topological(self, task: snapshot.Task, entry: _Entry, pipeline: bool) -> tuple[str, int] | None:
        """``place`` with the domain checks and scores (see the module docstring)."""
        ok = self._domain_ok(task)
        choice = self._best(task, entry.on_idle, ok)
        if choice is not None:
            return ALLOCATE, choice
        if pipeline:
            self._future(entry)
            choice = self._best(task, entry.on_future, ok)
            if choice is not None:
                return PIPELINE, choice
        return None

    def _best(self, task: snapshot.Task, scores: Scores, ok: npt.NDArray[np.bool_] | None) -> int | None:
        fits = scores > -np.inf
        if ok is not None:
            fits &= ok
        if not fits.any():
            return None
        extra = self.plugins.domain_score(task, fits)
        total = scores if extra is None else scores + extra  # -inf stays -inf where nothing fits
        if ok is not None and not ok.all():  # rows the domain checks refuse (-inf where nothing fits already)
            total = np.where(fits, total, -np.inf)
        return int(total.argmax())

    def _key(self, task: snapshot.Task) -> int:
        """The entry key of ``task``: equal for tasks the row-local hooks cannot tell apart."""
        key = self._local.get(task.shape)
        if key is None:
            p = task.placement
            local = (
                task.request,
                p.node_selector,
                p.node_affinity,
                p.tolerations,
                frozenset(t.topology_key for t in p.affinity),
                frozenset(c.topology_key for c in p.spread if c.hard),
            )
            key = self._local[task.shape] = self._locals.setdefault(local, len(self._locals))
        return key

    def _entry(self, task: snapshot.Task) -> _Entry:
        key = self._key(task)
        changed = self.session.nodes.changed_rows
        entry = self._cache.get(key)
        if entry is None:
            size = len(self.rows)
            req = self.session.vector(task.request)
            floor = np.where(req > 0, req, -np.inf)
            empty = np.empty(size)
            ok = np.empty(size, dtype=bool)
            floors = np.stack((floor, floor + req))  # whole numbers: idle - req ≥ floor is idle ≥ floor + req
            entry = _Entry(empty, empty.copy(), empty.copy(), ok, len(changed), req, floors, empty.copy())
            self._cache[key] = entry
            self._refresh(task, entry, self.rows)
            return entry
        if entry.seen < len(changed):
            fresh = set(changed[entry.seen :])
            entry.seen = len(changed)
            if len(fresh) * 8 < len(self.rows):
                self._refresh(task, entry, np.fromiter(fresh, dtype=np.intp, count=len(fresh)))
            else:
                self._refresh(task, entry, self.rows)
        return entry

    def _refresh(self, task: snapshot.Task, entry: _Entry, rows: npt.NDArray[np.intp]) -> None:
        ssn, n = self.session, len(rows)
        checks = self.plugins.predicate(task, rows)
        # A first copy and a second (``Lookahead``'s checks, ``extra`` 0 then 1) in one go.
        fits = np.logical_and.reduce(ssn.nodes.idle.take(rows, axis=0)[:, None, :] >= entry.floors, axis=2)
        on_idle, second = fits[:, 0], fits[:, 1]
        if checks or not self._all_ready:
            ok = self.ready[rows]
            for _, mask in checks:
                ok &= mask
            on_idle &= ok
            second &= ok
            entry.ok[rows] = ok
        else:
            entry.ok[rows] = True
        # Scored even where nothing fits (those rows are masked below). A row can fit on idle
        # but not on future idle (its room is pipelined to another gang): it keeps its score.
        scores = self.plugins.node_score(task, np.repeat(rows, 2), self.copies.steps(0, 2, n))
        score = scores[0::2]
        entry.score[rows] = score
        entry.second[rows] = np.where(second, scores[1::2], -np.inf)
        fresh = np.where(on_idle, score, -np.inf)
        entry.on_idle[rows] = fresh
        if entry.future_due is None:
            entry.future_due = np.zeros(len(self.rows), dtype=bool)
        entry.future_due[rows] = True
        rank = entry.ranking
        if rank is not None:
            if len(rows) == len(self.rows):
                entry.ranking = None  # rebuilt on next use
            else:
                keys = rank.keys(fresh, rows)
                rank.update(rows.tolist(), [k if f else None for k, f in zip(keys, on_idle.tolist(), strict=True)])

    def _future(self, entry: _Entry) -> None:
        """Bring ``on_future`` up to date for the rows refreshed since it last was.

        The same as computing it in ``_refresh``: a row's future idle changes only with an entry
        in ``Session.changed_rows``, and ``_entry`` refreshes those rows before any read.
        """
        if entry.future_due is None:
            return
        rows = np.flatnonzero(entry.future_due)
        entry.future_due = None
        fits = entry.ok[rows] & lookahead.fit_all(self.session.nodes.future.take(rows, axis=0) >= entry.floor)
        entry.on_future[rows] = np.where(fits, entry.score[rows], -np.inf)

    def explain(self, task: snapshot.Task) -> str:
        """Why no node fits, kube-scheduler style (``feasibility.fit_error``)."""
        return feasibility.fit_error(self.session, self.ready, self.checks(task), task)
