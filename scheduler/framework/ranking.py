"""Rows by (score desc, row asc) for one task shape: the best of them, sorted, kept current. Pure.

Each row that fits has one int key ordered exactly as the pair (-score, row): comparing ints is
several times cheaper than comparing tuples. A ``Ranking`` keeps only the best keys: every
fitting row whose key is at most ``bound`` is in ``top``, ascending (``bound`` None: every
fitting row is). A gang's placement reads the first few; when a row's score changes its owner
says so (``update``) and the row's key leaves ``top`` or moves within it, so nothing stale is
ever read. Once too few keys are left for what is asked, ``top`` is worked out again from the
scores (``DEPTH`` of them): rows that take copies mostly fall out of the best, so this happens
now and then, not on every gang.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from scheduler.framework import apart

__all__ = ["DEPTH", "Ranking", "Rows", "Scores"]

Scores = npt.NDArray[np.float64]
Rows = npt.NDArray[np.intp]
_MAGNITUDE = np.int64(0x7FFF_FFFF_FFFF_FFFF)
DEPTH = 1024  # keys ``top`` holds after it is worked out (more when more are asked for)


class Ranking:
    def __init__(self, size: int, scores: Scores, depth: int = DEPTH) -> None:
        self.shift = max(1, size).bit_length()  # key = (ordered -score << shift) | row
        self.mask = (1 << self.shift) - 1
        self._scores = scores  # each row's score (-inf: does not fit), kept current by the owner
        self.top: list[int] = []
        self.bound: int | None = None
        self._inside: dict[int, int] = {}  # row → its key, for the rows in ``top``
        self.depth = depth
        self._fill(depth)

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

    def row(self, key: int) -> int:
        return key & self.mask

    def update(self, rows: Iterable[int], keys: Iterable[int | None]) -> None:
        """New keys for ``rows`` (None: the row no longer fits), their scores already changed."""
        top, inside, bound = self.top, self._inside, self.bound
        for row, key in zip(rows, keys, strict=True):
            old = inside.pop(row, None)
            if old is not None:
                del top[bisect.bisect_left(top, old)]
            if key is not None and (bound is None or key <= bound):
                bisect.insort(top, key)
                inside[row] = key

    def take(self, count: int) -> list[int]:
        """The ``count`` best keys, best first (fewer when fewer rows fit)."""
        if len(self.top) < count and self.bound is not None:
            self._fill(max(self.depth, 2 * count))
        return self.top[:count]

    def take_where(self, count: int, ok: npt.NDArray[np.bool_], limit: int) -> list[int] | None:
        """The ``count`` best keys of the rows where ``ok`` holds, best first; None when more than
        ``limit`` rows had to be passed over, or ``top`` ran out first (the caller looks another way)."""
        best: list[int] = []
        passed = 0
        mask = self.mask
        for key in self.top:
            if len(best) == count:
                return best
            if ok[key & mask]:
                best.append(key)
            else:
                passed += 1
                if passed > limit:
                    return None
        return best if len(best) == count or self.bound is None else None

    def _fill(self, depth: int) -> None:
        """``top`` worked out again from the scores: the ``depth`` best keys (all when fewer fit)."""
        scores = self._scores
        rows = apart.top_rows(scores, np.arange(len(scores)), depth)
        self.top = self.keys(scores.take(rows), rows)  # in key order already: by score, then row
        # Fewer than ``depth`` rows: every row that fits. Exactly ``depth``: maybe more past them.
        self.bound = self.top[-1] if len(rows) == depth else None
        self._inside = dict(zip(rows.tolist(), self.top, strict=True))
