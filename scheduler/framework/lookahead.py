"""Scores of a task's candidate rows after 1, 2, … more copies, for ``placement.Placer``. Pure.

``Lookahead`` computes them in chunks, on first need, for the rows a gang's copies can go to
(``Placer._copies``, ``Placer.place_counted``), or one row as the session holds it now
(``score_now``, ``Placer.place_each``); a second copy's score is kept per row with the first
(``Placer._refresh``), so a gang spread one copy per row needs none of this.
Amounts are whole numbers in float64, so ``idle − n × request`` equals the session's own
running subtraction after n allocations bit for bit, and so do the scores computed from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.api import snapshot

if TYPE_CHECKING:
    from scheduler.framework import placement

__all__ = ["Copies", "Lookahead", "Vector", "fit_all", "rescorer", "score_now"]

Vector = npt.NDArray[np.float64]


def fit_all(checks: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Rows whose every column holds (``.all(axis=1)`` without its Python-level wrapper)."""
    result: npt.NDArray[np.bool_] = np.logical_and.reduce(checks, axis=1)
    return result


class Copies:
    """The extra-copy counts the look-aheads pass to ``node_score``, and what they take, cached:
    the same few recur for every gang."""

    def __init__(self) -> None:
        self._steps: dict[tuple[int, int, int], Vector] = {}
        self._taken: dict[tuple[int, int, int, int], Vector] = {}

    def steps(self, start: int, depth: int, times: int) -> Vector:
        """start, …, start + depth - 1, repeated ``times`` times."""
        key = (start, depth, times)
        steps = self._steps.get(key)
        if steps is None:
            steps = self._steps[key] = np.tile(np.arange(start, start + depth, dtype=np.float64), times)
        return steps

    def taken(self, task: snapshot.Task, req: Vector, start: int, depth: int, times: int) -> Vector:
        """``steps(start, depth, times)[:, None] * req``: what the extra copies take."""
        key = (task.shape, start, depth, times)
        taken = self._taken.get(key)
        if taken is None:
            taken = self._taken[key] = self.steps(start, depth, times)[:, None] * req
        return taken


class Lookahead:
    """Scores of candidate rows after 1, 2, … more copies of one task, computed in chunks: the
    first reaches as deep as ``wanted`` copies spread over the rows would (4 × that share + 1)."""

    def __init__(
        self,
        placer: placement.Placer,
        task: snapshot.Task,
        req: Vector,
        floor: Vector,
        rows: npt.NDArray[np.intp],
        wanted: int,
    ) -> None:
        self.placer, self.task = placer, task
        self.req, self.floor = req, floor
        self.taken = [0] * len(rows)
        self.rows = rows
        self.depth = max(1, min(wanted, 4 * wanted // max(1, len(rows)) + 1))
        self.scores: list[list[float | None]] = []  # filled on first need (a lone copy needs none)

    def after(self, i: int, wanted: int) -> float | None:
        """Row ``i`` took one more copy: its score for the next one, None if that does not fit."""
        self.taken[i] += 1
        taken = self.taken[i]
        if not wanted:
            return None
        if not self.scores:
            self._fill(None, 1, self.depth)
        if taken > len(self.scores[i]):
            # Past the look-ahead (big gangs on few rows): double it, for this row alone.
            self._fill(i, taken, min(wanted, 2 * taken))
        return self.scores[i][taken - 1]

    def _fill(self, which: int | None, start: int, depth: int) -> None:
        """Scores after ``start`` … ``start + depth - 1`` more copies, for row ``which`` or all."""
        ssn = self.placer.session
        chosen = self.rows if which is None else self.rows[which : which + 1]
        rows = np.repeat(chosen, depth)
        extra = self.placer.copies.steps(start, depth, len(chosen))
        taken = self.placer.copies.taken(self.task, self.req, start, depth, len(chosen))
        fits = fit_all(ssn.nodes.idle.take(rows, axis=0) - taken >= self.floor)
        # Plain floats, None where the copy does not fit: the merge loop then stays in Python.
        scores = self.placer.plugins.node_score(self.task, rows, extra).tolist()
        values: list[float | None] = [s if f else None for s, f in zip(scores, fits.tolist(), strict=True)]
        if which is None:
            self.scores = [values[n * depth : (n + 1) * depth] for n in range(len(chosen))]
        else:
            self.scores[which] += values


def score_now(placer: placement.Placer, task: snapshot.Task, req: Vector, floor: Vector, row: int) -> float:
    """``row``'s score for one more copy of ``task`` as the session holds it now (-inf when it
    does not fit): ``Lookahead``'s operations with no extra copy, so the entry's own."""
    ahead = Lookahead(placer, task, req, floor, np.array([row], dtype=np.intp), 1)
    ahead._fill(None, 0, 1)
    value = ahead.scores[0][0]
    return -np.inf if value is None else value


def rescorer(
    placer: placement.Placer, task: snapshot.Task, second: Vector, req: Vector, floor: Vector
) -> Callable[[int], float]:
    """A row's node score for one more copy of ``task`` once a run placed one there (copies placed
    one by one, ``Placer.place_each``): ``second`` (the entry's score for a second copy) the first
    time, then ``score_now`` (the session holds every copy placed so far)."""
    taken: set[int] = set()

    def rescore(row: int) -> float:
        if row not in taken:
            taken.add(row)
            return float(second[row])
        return score_now(placer, task, req, floor, row)

    return rescore
