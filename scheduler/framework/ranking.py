"""Rows by (score desc, row asc) for one task shape: a heap of int keys, cleaned lazily. Pure.

Each row that fits has one int key ordered exactly as the pair (-score, row): comparing ints
is several times cheaper than comparing tuples, and a gang's placement pops a few dozen keys
from a heap of every node. ``current`` says which key is a row's live one. When a row's score
gets better its new key is pushed; when it gets worse (as a rule: a placement took room there)
nothing is pushed: the row's older, better key still in the heap stands for it, and when that
key surfaces it is replaced by the live one in one step (``heapreplace``), so a row changed many
times between surfacings is pushed once. Keys of rows that no longer fit are dropped when they
surface. Invariant: every row with a live key has a key no worse than it in the heap, or is lent.
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
        """New live keys for ``rows`` (None: the row no longer fits); only a better one (or one
        for a row without a live key) is pushed now. After ``restore``: no row may be lent."""
        current, heap, push = self.current, self.heap, heapq.heappush
        for row, key in zip(rows, keys, strict=True):
            old = current[row]
            current[row] = key
            if key is not None and (old is None or key < old):
                push(heap, key)

    def _surface(self) -> int | None:
        """The heap's best live key, popped (None: the heap is empty); keys that stand for a
        worse live key are replaced by it on the way, stale ones dropped."""
        heap, current, mask = self.heap, self.current, self.mask
        while heap:
            key = heap[0]
            live = current[key & mask]
            if live == key:
                return heapq.heappop(heap)
            if live is not None and live > key:
                heapq.heapreplace(heap, live)  # the row got worse since this key was pushed
            else:
                heapq.heappop(heap)  # stale: the row no longer fits, or its better key is in
        return None

    def take(self, count: int) -> list[int]:
        """Pop the ``count`` best live keys, best first; they are lent until ``restore``."""
        current, mask = self.current, self.mask
        best: list[int] = []
        while len(best) < count:
            key = self._surface()
            if key is None:
                break
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
        current, mask = self.current, self.mask
        best: list[int] = []
        passed: list[int] = []
        while len(best) < count and len(passed) <= limit:
            key = self._surface()
            if key is None:
                break
            row = key & mask
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
        """Put lent keys back, except those of ``changed`` rows: those have no key now, and
        ``update`` gives them their new one (so call this before it)."""
        heap, mask, current = self.heap, self.mask, self.current
        for key in self.lent:
            row = key & mask
            if row not in changed:
                heapq.heappush(heap, key)
            else:
                current[row] = None
        self.lent = []
