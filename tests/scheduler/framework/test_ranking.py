"""ranking: int keys order rows exactly as (-score, row); ``take`` gives the best keys of the
scores as they are, whatever changed since (``update``), and works ``top`` out again when short."""

from __future__ import annotations

import random

import numpy as np

from scheduler.framework import ranking

AWKWARD = [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e308, -1e308, 2.5, 2.5, 100.0, 99.99999999999999]


def _ranking(scores: list[float]) -> tuple[ranking.Ranking, np.ndarray]:
    array = np.array(scores)
    return ranking.Ranking(len(scores), array), array


def test_keys_order_as_score_then_row() -> None:
    rng = random.Random(7)
    scores = AWKWARD + [rng.choice([*AWKWARD, rng.uniform(-200, 200)]) for _ in range(500)]
    rank, _ = _ranking(scores)
    keys = rank.keys(np.array(scores), np.arange(len(scores), dtype=np.intp))
    by_key = [rank.row(key) for key in sorted(keys)]
    assert by_key == sorted(range(len(scores)), key=lambda row: (-scores[row], row))
    # Equal scores (0.0 and -0.0 included) differ only by row.
    assert rank.row(keys[0]) == 0 and keys[0] >> rank.shift == keys[1] >> rank.shift
    # ``top`` worked out from the same scores, a few or all of them, in the same order.
    order = sorted(range(len(scores)), key=lambda row: (-scores[row], row))
    for depth in (1, 7, 50, len(scores)):
        shallow = ranking.Ranking(len(scores), np.array(scores), depth=depth)
        assert [shallow.row(k) for k in shallow.take(depth)] == order[:depth]
        assert [shallow.row(k) for k in shallow.take(len(scores))] == order


def test_top_of_many_alike_rows_is_their_lowest() -> None:
    """Most rows share the best score (alike nodes): ``top`` is the lowest of them, in row order."""
    scores = np.array([3.0] * 100 + [5.0] * 200 + [1.0] * 50)
    rank = ranking.Ranking(len(scores), scores, depth=64)
    assert [rank.row(k) for k in rank.take(64)] == list(range(100, 164))
    assert [rank.row(k) for k in rank.take(250)] == [*range(100, 300), *range(50)]


def test_take_reads_the_scores_as_updated() -> None:
    rank, scores = _ranking([5.0, 9.0, -np.inf, 7.0, 9.0])
    assert [rank.row(k) for k in rank.take(2)] == [1, 4]  # ties to the lower row; row 2 does not fit
    assert [rank.row(k) for k in rank.take(2)] == [1, 4]  # nothing changed: the same
    scores[[1, 3]] = [1.0, 10.0]  # row 1 took copies; row 3 got better
    rank.update([1, 3], rank.keys(scores[[1, 3]], np.array([1, 3], dtype=np.intp)))
    assert [rank.row(k) for k in rank.take(5)] == [3, 4, 0, 1]
    scores[3] = -np.inf
    rank.update([3], [None])  # row 3 no longer fits
    assert [rank.row(k) for k in rank.take(5)] == [4, 0, 1]


def test_random_updates_take_what_a_full_sort_would() -> None:
    """Rows get better, worse or stop fitting between takes, as placements change them; more
    rows than ``top`` keeps, so it runs short and is worked out again."""
    rng = random.Random(11)
    size = 300
    scores = np.array([float(rng.randint(0, 60)) for _ in range(size)])
    rank = ranking.Ranking(size, scores, depth=64)
    refills = 0
    for _ in range(600):
        # Mostly the best rows change (a gang took them), now and then any row.
        best = [rank.row(k) for k in rank.take(8)]
        changed = set(rng.sample(best, min(len(best), rng.randint(0, 8))))
        changed |= set(rng.sample(range(size), rng.randint(0, 3)))
        rows = sorted(changed)
        for row in rows:  # the best rows mostly fall: the copies they took lower their score
            low = 0 if row in best else rng.randint(0, 60)
            scores[row] = -np.inf if rng.random() < 0.05 else float(rng.randint(low // 2, low + 30))
        keys = rank.keys(scores[rows], np.array(rows, dtype=np.intp))
        rank.update(rows, [None if scores[r] == -np.inf else k for r, k in zip(rows, keys, strict=True)])
        count = rng.randint(1, 40)
        fitting = [r for r in range(size) if scores[r] > -np.inf]
        expected = sorted(fitting, key=lambda r: (-scores[r], r))[:count]
        bound = rank.bound
        assert [rank.row(k) for k in rank.take(count)] == expected
        refills += rank.bound != bound
    assert refills >= 3  # top ran short and was worked out again


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


def test_take_where_takes_the_best_passing_rows() -> None:
    rng = random.Random(11)
    gave_up = took = 0
    for _ in range(300):
        n = rng.randint(1, 60)
        scores = [rng.choice([-np.inf, 1.0, 2.0, rng.uniform(0, 10)]) for _ in range(n)]
        ok = [rng.random() < 0.6 for _ in range(n)]
        count, limit = rng.randint(1, 12), rng.randint(0, 8)
        rank, _ = _ranking(scores)
        order = sorted((row for row in range(n) if scores[row] > -np.inf), key=lambda row: (-scores[row], row))
        keys = rank.take_where(count, np.array(ok), limit)
        expected = _take_where(order, ok, count, limit)
        assert (None if keys is None else [rank.row(k) for k in keys]) == expected
        gave_up += keys is None
        took += keys is not None
        assert [rank.row(k) for k in rank.take(n)] == order  # nothing lost, nothing doubled
    assert gave_up > 20 and took > 100


def test_take_where_gives_up_past_top() -> None:
    """Past ``top`` nothing is known: fewer passing rows there than asked is no answer."""
    size = 74
    rank = ranking.Ranking(size, np.array([float(size - row) for row in range(size)]), depth=64)
    ok = np.zeros(size, dtype=bool)
    ok[-1] = True  # only the worst row passes, beyond ``top``
    assert rank.take_where(1, ok, limit=size) is None
