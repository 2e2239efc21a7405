"""Runs that only a domain score follows: their rows from a few candidates per domain. Pure.

A run (tasks alike in request, placement, namespace and labels) with domain scores but no
domain check (preferred pod affinity, ``ScheduleAnyway`` spread) is placed one copy at a time:
each copy moves the next one's scores. The long way adds the domain score to the node score over
every row for each copy. Here each plugin hands its score over as ``Part``s, whose value at a
row depends only on the row's domain of one key (the same key for every part, or none) and, for
a few *special* rows (those holding the run's own pods, say), on the row itself. Among the rows
of one domain that are not special, then, every total is the same domain value added to the
row's node score, so the best totals are those of the best node scores: each domain's ``count``
best rows by (node score desc, row asc: ``apart.top_rows``) are the only candidates besides the
special rows (at most ``count`` - 1 of them are taken before the last copy). Each copy is scored on those alone, with
the long way's operations in its order, so the same floats; the best total wins, ties to the
lower row, as an argmax over every row does. The rows taken become special (each part is told,
``Part.add``).

Rounding can make a lower node score tie a higher one once the domain value is added, and then
the lower row wins. So each domain keeps a bound on its other rows' node scores (the best score
below its candidates', or theirs once no candidate of the lowest score is left: the others of that
score have higher rows), and should a row at the bound not total strictly less than the winner,
the run stops there and the caller goes on the long way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from scheduler.framework import apart, domains

__all__ = ["Part", "Rows", "Scores", "Value", "View", "place"]

Scores = npt.NDArray[np.float64]
Rows = npt.NDArray[np.intp]


class View:
    """The rows that fit the next copy (the long way's ``feasible``: a node score above -inf), as
    a part reads them: how many, which domains of the run's key hold one, whether a row does."""

    def __init__(self, scores: Scores, present: list[bool], total: int) -> None:
        self._scores = scores
        self._present = present  # per domain of the run's key (size + 1 entries; one without a key)
        self.total = total

    def present(self) -> list[bool]:
        """Per domain of the run's key (size + 1 entries, the last: rows without it): whether a
        row that fits is there (``Domains.present`` of the feasible rows)."""
        return self._present

    def fits(self, row: int) -> bool:
        return bool(self._scores[row] > -np.inf)


@dataclasses.dataclass(frozen=True, slots=True)
class Value:
    """A part's value at every row for the next copy: ``rows``' own where given, else the row's
    domain's (``domains``, per domain of the run's key, size + 1 entries) or, without, ``flat``."""

    domains: list[float] | None
    flat: float
    rows: dict[int, float]


class Part(Protocol):
    """One plugin's domain score, replayed copy by copy (``Plugin.domain_split``)."""

    @property
    def key(self) -> str | None:
        """The topology key whose domain the value at a row reads (None: none)."""
        ...

    def special(self) -> list[int]:
        """The rows whose value may differ from the other rows' of their domain, as the run starts."""
        ...

    def values(self, view: View) -> Value:
        """The part's value at every row for the next copy: ``domain_score``'s there."""
        ...

    def add(self, row: int) -> None:
        """A copy went to ``row`` (the session holds it already)."""
        ...


def place(
    scores: Scores,
    parts: Sequence[Part],
    topo: domains.Domains,
    count: int,
    allocate: Callable[[int, int], None],
    rescore: Callable[[int], float],
) -> int:
    """Place up to ``count`` copies; how many were placed (fewer: no row fits the next one, or a
    row past the candidates might tie). ``scores``: each row's node score for the next copy, -inf
    where it does not fit, kept so in place; ``parts`` on one key at most, in the order
    ``domain_score`` sums them; ``allocate(n, row)`` places copy n; ``rescore(row)``: the row's
    node score for one more copy once it took one."""
    keys = {p.key for p in parts} - {None}
    key = keys.pop() if keys else None
    if key is None:
        groups, ids = [np.arange(len(scores), dtype=np.intp)], np.zeros(len(scores), dtype=np.intp)
    else:
        groups, ids = topo.groups(key), topo.ids(key)[0]  # the last: rows without the key
    special = sorted({row for part in parts for row in part.special()})
    open_ = scores
    if special:
        open_ = scores.copy()
        open_[special] = -np.inf
    runs = [_Run(d, group, open_, count) for d, group in enumerate(groups)]
    xs = dict(zip(special, scores.take(special).tolist(), strict=True))  # special rows' node scores
    domain_of = dict(zip(special, ids.take(special).tolist(), strict=True))

    def held(d: int) -> bool:
        """Whether a row of domain ``d`` fits."""
        return runs[d].open > 0 or any(x > -np.inf for at, x in xs.items() if domain_of[at] == d)

    total = sum(run.open for run in runs) + sum(x > -np.inf for x in xs.values())
    present = [held(d) for d in range(len(runs))]
    view = View(scores, present, total)
    placed = 0
    while placed < count:
        values = [part.values(view) for part in parts]
        best, row = -np.inf, -1
        extras = [_extra(values, -1, run.domain) for run in runs]
        for run, extra in zip(runs, extras, strict=True):
            total, at = run.best(extra)
            if total > best or (total == best and at < row):
                best, row = total, at
        for at, x in xs.items():
            total = x + _extra(values, at, domain_of[at])
            if total > best or (total == best and at < row):
                best, row = total, at
        if row < 0:
            break
        for run, extra in zip(runs, extras, strict=True):
            if not run.clear(extra, best):
                return placed  # a row past the candidates might tie: the long way from here
        allocate(placed, row)
        placed += 1
        for part in parts:
            part.add(row)
        if row not in xs:  # a candidate, special from now on
            domain_of[row] = int(ids[row])
            runs[domain_of[row]].take(row)
        scores[row] = xs[row] = new = rescore(row)
        if new == -np.inf:  # the row no longer fits: is its domain still held?
            view.total -= 1
            present[domain_of[row]] = held(domain_of[row])
    return placed


def _extra(values: list[Value], row: int, domain: int) -> float:
    """The parts' sum at ``row`` (in ``domain``; -1: any row that is not special), in their order."""
    total = 0.0
    for n, v in enumerate(values):
        own = v.rows.get(row)
        if own is None:
            own = v.flat if v.domains is None else v.domains[domain]
        total = own if n == 0 else total + own
    return total


class _Run:
    """One domain's candidates that are not special, by (node score desc, row asc), and what
    bounds the domain's other open rows (``x``: the node scores as the run started)."""

    def __init__(self, domain: int, group: Rows, scores: Scores, count: int) -> None:
        self.domain = domain
        self.x = x = scores.take(group)
        self.open = int(np.count_nonzero(x > -np.inf))  # rows that fit and are not special
        best = apart.top_rows(scores, group, count)
        self.scores: list[float] = scores.take(best).tolist()
        self.rows: list[int] = best.tolist()
        self.last = self.scores[-1] if self.scores else -np.inf  # the lowest candidate score
        self.at_last = self.scores.count(self.last)  # untaken candidates that score ``last``
        # Open rows past the candidates that score ``last`` (all have higher rows).
        self.rest = int(np.count_nonzero(x == self.last)) - self.at_last if self.scores else 0
        self._below: float | None = None  # the best score under ``last``, once asked
        self.start = 0  # candidates before it are taken
        self.taken: set[int] = set()

    def best(self, extra: float) -> tuple[float, int]:
        """(best total, its lowest row) among the untaken candidates; (-inf, -1) with none."""
        rows, scores, taken = self.rows, self.scores, self.taken
        while self.start < len(rows) and rows[self.start] in taken:
            self.start += 1
        if self.start == len(rows):
            return -np.inf, -1
        best, row = scores[self.start] + extra, rows[self.start]
        for i in range(self.start + 1, len(rows)):
            if rows[i] in taken:
                continue
            if scores[i] + extra != best:
                break  # lower scores give lower totals
            row = min(row, rows[i])
        return best, row

    def clear(self, extra: float, best: float) -> bool:
        """Whether every open row of the domain past the candidates totals below ``best`` (or ties
        it with a higher row than a candidate's): those that score ``last`` lose ties to a
        candidate that does, while one is left; those below, to none."""
        if not self.open:
            return True
        if self.rest and not self.at_last:
            return self.last + extra < best
        if self.last + extra < best:
            return True
        if self._below is None:
            self._below = float(np.where(self.x < self.last, self.x, -np.inf).max())
        return self._below + extra < best

    def take(self, row: int) -> None:
        """A copy went to ``row``, a candidate: special from now on."""
        self.open -= 1
        self.taken.add(row)
        if self.scores[self.rows.index(row)] == self.last:
            self.at_last -= 1
