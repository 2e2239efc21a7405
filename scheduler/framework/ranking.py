"""Rows by (score desc, row asc) for one task shape: a heap of int keys, cleaned lazily. Pure.

Each row that fits has one int key ordered exactly as the pair (-score, row): comparing ints
is several times cheaper than comparing tuples, and a gang's placement pops a few dozen keys
from a heap of every node. When a row's score changes its new key is pushed and the old one
left behind; ``current`` says which key is a row's live one, and stale keys are dropped when
they surface.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = ["Ranking"]

Scores = npt.NDArray[np.float64]
Rows = npt.NDArray[np.intp]
_MAGNITUDE = np.int64(0x7FFF_FFFF_FFFF_FFFF)


class Ranking:
    def __init__(self, size: int) -> None:
        self.shift = max(1, size).bit_length()  # key = (ordered -score << shift) | row
        self.mask = (1 << self.shift) - 1
        self.heap: list[int] = []
        self.current: list[int | None] = [None] * size  # live key per row; None: does not fit
        # Keys ``take`` handed out: back in the heap at the next ``restore`` unless their row changed.
        self.lent: list[int] = []

    def keys(self, scores: Scores, rows: Rows) -> list[int]:
        """One int per (-score, row), ordered as the pairs are: best score first, then low row.

        A float's bits read as a signed integer order non-negative floats; negative ones order
        in reverse, so their magnitude bits are negated (which also makes -0.0 equal to 0.0).
        That, for -score, is -bits where score ≥ +0 and the bare magnitude where score ≤ -0.
        """
        bits = scores.view(np.int64)
        ordered = np.where(bits >= 0, -bits, bits & _MAGNITUDE).tolist()
        shift = self.shift
        return [(o << shift) | row for o, row in zip(ordered, rows.tolist(), strict=True)]

    def rebuild(self, scores: Scores) -> None:
        """Start over from every row's score (-inf: does not fit)."""
        fit = np.flatnonzero(scores > -np.inf)
        self.heap = self.keys(scores[fit], fit)
        self.current = [None] * len(scores)
        current = self.current
        for key, row in zip(self.heap, fit.tolist(), strict=True):
            current[row] = key
        self.lent = []
        heapq.heapify(self.heap)

    def stale(self) -> bool:
        """Enough dead keys piled up that a rebuild is cheaper than popping through them."""
        return len(self.heap) > 2 * len(self.current) + 1024

    def row(self, key: int) -> int:
        return key & self.mask

    def update(self, rows: Iterable[int], keys: Iterable[int | None]) -> None:
        """New live keys for ``rows`` (None: the row no longer fits), pushed onto the heap."""
        current, heap, push = self.current, self.heap, heapq.heappush
        for row, key in zip(rows, keys, strict=True):
            current[row] = key
            if key is not None:
                push(heap, key)

    def take(self, count: int) -> list[int]:
        """Pop the ``count`` best live keys, best first; they are lent until ``restore``."""
        heap, current, mask = self.heap, self.current, self.mask
        best: list[int] = []
        pop = heapq.heappop
        while heap and len(best) < count:
            key = pop(heap)
            if current[key & mask] == key:
                best.append(key)
                current[key & mask] = None  # taken: a duplicate of this key is now stale
        for key in best:
            current[key & mask] = key
        self.lent = best
        return best

    def take_where(self, count: int, ok: npt.NDArray[np.bool_], limit: int) -> list[int] | None:
        """``take`` among the rows where ``ok`` holds: the ``count`` best live keys of those, best
        first; the live keys passed over are lent too. None (nothing lent) when more than
        ``limit`` had to be passed over: the caller looks another way."""
        heap, current, mask = self.heap, self.current, self.mask
        best: list[int] = []
        passed: list[int] = []
        pop = heapq.heappop
        while heap and len(best) < count and len(passed) <= limit:
            key = pop(heap)
            row = key & mask
            if current[row] == key:
                (best if ok[row] else passed).append(key)
                current[row] = None  # taken: a duplicate of this key is now stale
        self.lent = best + passed
        for key in self.lent:
            current[key & mask] = key
        if len(passed) > limit:
            self.restore(set())
            return None
        return best

    def restore(self, changed: set[int]) -> None:
        """Put lent keys back, except those of ``changed`` rows (their new keys get pushed)."""
        heap, mask = self.heap, self.mask
        for key in self.lent:
            if key & mask not in changed:
                heapq.heappush(heap, key)
        self.lent = []
