"""Runs whose only domain check counts their own copies per domain of one key: their rows in one step. Pure.

A run (tasks alike in request, placement, namespace and labels) whose one topology spread
constraint is ``DoNotSchedule`` and counts the run's own pods, with no pod terms besides, is
placed one at a time the long way (``Placer.place`` then allocate, the skew check over every
row each time). What each copy changes is known in advance: the idle resources of its row and
the count of its domain (of the constraint's key), nothing else. The other domain checks (other
pods' required anti-affinity that matches the run) do not move: the copies hold no terms. With
no domain score (nothing scores the run by its domains), each copy goes to the best row by node
score among the rows that fit and whose domain the constraint allows; so this module keeps, per
domain, its best row, asks the plugin's ``Rule`` which domains the next copy may go to, and
takes the best of theirs (ties to the lower row, as an argmax over every row would), then
tells the rule and puts the picked row back with its score for one more copy.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Protocol

import numpy as np
import numpy.typing as npt

from scheduler.framework import apart

__all__ = ["MAX_DOMAINS", "Ahead", "Ids", "Mask", "Rule", "Scores", "place"]

# Keys with more domains are left to the long way: the per-domain bookkeeping below is a
# Python loop over the domains for each copy.
MAX_DOMAINS = 16

Scores = npt.NDArray[np.float64]
Ids = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]


class Rule(Protocol):
    """A plugin's domain check on one topology key, replayed copy by copy."""

    @property
    def key(self) -> str: ...

    def allowed(self) -> Mask:
        """Per domain of ``key`` (size + 1 entries, the last for rows without it): whether the
        next copy may go there, given the copies ``add`` was told of."""
        ...

    def add(self, row: int) -> None:
        """A copy went to ``row``."""
        ...


class Ahead(Protocol):
    """Scores of fixed candidate rows after more copies (``lookahead.Lookahead``)."""

    def after(self, i: int, wanted: int) -> float | None:
        """Candidate ``i`` took one more copy: its score for the next one (None: does not fit);
        ``wanted``: how many copies are still to place."""
        ...


def place(scores: Scores, domains: list[Ids], rule: Rule, count: int, ahead: Callable[[Ids], Ahead]) -> list[int]:
    """Rows for up to ``count`` copies, in order: ``scores`` is each row's node score for a first
    copy (-inf where it does not fit or another domain check refuses it), ``domains`` the rows of
    each domain of ``rule.key`` (rows without it are never picked); ``ahead(rows)`` scores more
    copies on the candidate rows.

    Within a domain an untouched row is only picked once every better untouched one there has
    been, so each domain's ``count`` best rows are the only candidates; each domain's are a heap
    of (-score, row, candidate), merged under the rule copy by copy.
    """
    heaps: list[list[tuple[float, int, int]]] = []
    rows: list[int] = []
    for within in domains:  # each domain's own rows, not every row once per domain
        best = apart.top_rows(scores, within, count)
        values, picked = scores.take(best).tolist(), best.tolist()
        heaps.append([(-v, r, len(rows) + n) for n, (v, r) in enumerate(zip(values, picked, strict=True))])
        rows += picked
    more = ahead(np.array(rows, dtype=np.intp))
    picks: list[int] = []
    while len(picks) < count:
        allowed = rule.allowed().tolist()
        # The best head among the allowed domains: higher score, then the lower row (an argmax).
        heads = [(heap[0], d) for d, heap in enumerate(heaps) if heap and allowed[d]]
        if not heads:
            break
        (_, row, i), d = min(heads)
        heapq.heappop(heaps[d])
        picks.append(row)
        rule.add(row)
        nxt = more.after(i, count - len(picks))
        if nxt is not None:
            heapq.heappush(heaps[d], (-nxt, row, i))
    return picks
