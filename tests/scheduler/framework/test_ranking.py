"""ranking: int keys order rows exactly as (-score, row); stale keys never come out of ``take``."""

from __future__ import annotations

import random

import numpy as np

from scheduler.framework import ranking

AWKWARD = [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e308, -1e308, 2.5, 2.5, 100.0, 99.99999999999999]


def test_keys_order_as_score_then_row() -> None:
    rng = random.Random(7)
    scores = AWKWARD + [rng.choice([*AWKWARD, rng.uniform(-200, 200)]) for _ in range(500)]
    rank = ranking.Ranking(len(scores))
    keys = rank.keys(np.array(scores), np.arange(len(scores), dtype=np.intp))
    by_key = [rank.row(key) for key in sorted(keys)]
    assert by_key == sorted(range(len(scores)), key=lambda row: (-scores[row], row))
    # Equal scores (0.0 and -0.0 included) differ only by row.
    assert rank.row(keys[0]) == 0 and keys[0] >> rank.shift == keys[1] >> rank.shift


def test_take_skips_stale_and_restore_returns_only_unchanged() -> None:
    scores = np.array([5.0, 9.0, -np.inf, 7.0, 9.0])
    rank = ranking.Ranking(len(scores))
    rank.rebuild(scores)
    assert [rank.row(k) for k in rank.take(2)] == [1, 4]  # ties to the lower row; row 2 does not fit
    # Row 1 changed while lent (now 1.0); row 4 did not. Row 3 got better.
    rank.update([1, 3], rank.keys(np.array([1.0, 10.0]), np.array([1, 3], dtype=np.intp)))
    rank.restore({1, 3})
    assert [rank.row(k) for k in rank.take(5)] == [3, 4, 0, 1]
    rank.restore(set())
    rank.update([3], [None])  # row 3 no longer fits: its key is dropped when it surfaces
    assert [rank.row(k) for k in rank.take(5)] == [4, 0, 1]


def test_random_updates_take_what_a_full_sort_would() -> None:
    """Rows get better, worse or stop fitting between takes, as placements change them."""
    rng = random.Random(11)
    size = 40
    scores: list[float | None] = [float(rng.randint(0, 9)) for _ in range(size)]
    rank = ranking.Ranking(size)
    rank.rebuild(np.array([-np.inf if s is None else s for s in scores]))
    for _ in range(300):
        changed = set(rng.sample(range(size), rng.randint(0, 8)))
        for row in changed:
            scores[row] = None if rng.random() < 0.1 else float(rng.randint(0, 9))
        rows = sorted(changed)
        fresh = np.array([-np.inf if scores[r] is None else scores[r] for r in rows])
        keys = rank.keys(fresh, np.array(rows, dtype=np.intp))
        rank.update(rows, [None if scores[r] is None else k for r, k in zip(rows, keys, strict=True)])
        rank.restore(changed)
        count = rng.randint(1, 6)
        fitting = [r for r in range(size) if scores[r] is not None]
        expected = sorted(fitting, key=lambda r: (-(scores[r] or 0.0), r))[:count]
        assert [rank.row(k) for k in rank.take(count)] == expected
