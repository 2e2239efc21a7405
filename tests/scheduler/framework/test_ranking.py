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


def _take_where(order: list[int], ok: list[bool], count: int, limit: int) -> list[int] | None:
    """What ``take_where`` must answer, walking the rows best first."""
    best: list[int] = []
    passed = 0
    for row in order:
        if len(best) == count or passed > limit:
            break
        if ok[row]:
            best.append(row)
        else:
            passed += 1
    return None if passed > limit else best


def test_take_where_takes_the_best_passing_rows_and_lends_the_rest_back() -> None:
    rng = random.Random(11)
    gave_up = took = 0
    for _ in range(300):
        n = rng.randint(1, 60)
        scores = np.array([rng.choice([-np.inf, 1.0, 2.0, rng.uniform(0, 10)]) for _ in range(n)])
        ok = [rng.random() < 0.6 for _ in range(n)]
        count, limit = rng.randint(1, 12), rng.randint(0, 8)
        rank = ranking.Ranking(n)
        rank.rebuild(scores)
        order = sorted((row for row in range(n) if scores[row] > -np.inf), key=lambda row: (-scores[row], row))
        keys = rank.take_where(count, np.array(ok), limit)
        expected = _take_where(order, ok, count, limit)
        assert (None if keys is None else [rank.row(k) for k in keys]) == expected
        gave_up += keys is None
        took += keys is not None
        rank.restore(set())
        assert [rank.row(k) for k in rank.take(n)] == order  # nothing lost, nothing doubled
    assert gave_up > 20 and took > 100
