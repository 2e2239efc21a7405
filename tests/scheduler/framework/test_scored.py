"""``scored.place`` on its own (pure): parts standing in for the plugins' split scores, against an
argmax over every row of the node scores plus the parts' values, copy by copy.

The values are chosen so that rounding matters: node scores a float step apart, and domain
values so large that adding them makes different node scores total the same (then the lower row
must win, as an argmax picks it). Where such a tie could reach past the candidates the run stops
(the caller goes on the long way); it must never pick differently from the argmax.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from scheduler.api import building
from scheduler.framework import domains, scored
from tests.builders import scheduler as b

ZONE = "zone"


OWN = [0.0, 25.0, 50.0, 100.0]


class _Zonal:
    """A part per domain of the zone: its values for copy k are ``values[k]``."""

    key = ZONE

    def __init__(self, values: list[list[float]]) -> None:
        self.per_copy, self.copy = values, 0

    def special(self) -> list[int]:
        return []

    def values(self, view: scored.View) -> scored.Value:
        return scored.Value(self.per_copy[self.copy], 0.0, {})

    def add(self, row: int) -> None:
        self.copy += 1


class _Busy:
    """A part with a flat value (``flats[k]`` for copy k) and values of their own for the rows it
    counts: some from the start, then every row a copy went to."""

    key = None

    def __init__(self, flats: list[float], busy: list[int]) -> None:
        self.flats, self.busy, self.copy = flats, set(busy), 0

    def special(self) -> list[int]:
        return sorted(self.busy)

    def values(self, view: scored.View) -> scored.Value:
        return scored.Value(None, self.flats[self.copy], {row: OWN[(row + self.copy) % 4] for row in self.busy})

    def add(self, row: int) -> None:
        self.busy.add(row)
        self.copy += 1


def _argmax(scores: npt.NDArray[np.float64], ids: npt.NDArray[np.intp], values: list[scored.Value]) -> int:
    """The long way: every row's node score plus the parts' values there, in order; -1 if none fits."""
    extra = None
    for v in values:
        value = np.full(len(scores), v.flat) if v.domains is None else np.array(v.domains).take(ids)
        for row, own in v.rows.items():
            value[row] = own
        extra = value if extra is None else extra + value
    total = scores if extra is None else scores + extra
    row = int(total.argmax())
    return row if total[row] > -np.inf else -1


def _case(seed: int) -> tuple[int, int]:
    """(copies placed, copies the argmax places) for one seeded case; asserts the picks agree."""
    r = random.Random(seed)
    n, zones, count = r.randint(1, 40), r.randint(1, 4), r.randint(1, 12)
    labels = [{ZONE: f"z{i % zones}"} if r.random() > 0.1 else {} for i in range(n)]
    nodes = [b.node(f"n{i:02d}", labels=labels[i]) for i in range(n)]
    topo = domains.Domains(building.build(nodes=nodes, pods=[], podgroups=[], queues=[]).nodes)
    ids, size = topo.ids(ZONE)
    big = 2.0**53 if r.random() < 0.5 else 100.0  # past 2^53 sums round to even: near scores tie
    near = [1.0, float(np.nextafter(1.0, 0.0)), 2.0, 3.0, 0.5]
    scores = np.array([r.choice(near) if r.random() > 0.1 else -np.inf for _ in range(n)])
    zonal = [[r.choice([0.0, big, 2 * big]) for _ in range(size + 1)] for _ in range(count)]
    flats = [r.choice([0.0, 50.0, 100.0]) for _ in range(count)]
    busy = r.sample(range(n), min(n, r.randint(0, 3)))
    with_busy = r.random() < 0.6
    cap = [r.randint(1, 3) for _ in range(n)]

    def parts() -> list[scored.Part]:
        return [_Zonal(zonal), _Busy(flats, busy)] if with_busy else [_Zonal(zonal)]

    def rescorer(x: npt.NDArray[np.float64]) -> Callable[[int], float]:
        times: dict[int, int] = {}

        def rescore(row: int) -> float:
            times[row] = times.get(row, 0) + 1
            return -np.inf if times[row] >= cap[row] else float(x[row]) - 0.5 * times[row]

        return rescore

    picks: list[int] = []
    placed = scored.place(scores.copy(), parts(), topo, count, lambda k, row: picks.append(row), rescorer(scores))
    assert placed == len(picks)
    expected: list[int] = []
    x, ref, rescore = scores.copy(), parts(), rescorer(scores)
    view = scored.View(x, [True] * (size + 1), n)  # the fake parts do not read it
    for _ in range(count):
        row = _argmax(x, ids, [part.values(view) for part in ref])
        if row < 0:
            break
        expected.append(row)
        for part in ref:
            part.add(row)
        x[row] = rescore(row)
    assert picks == expected[: len(picks)], (seed, picks, expected)
    return len(picks), len(expected)


def test_picks_are_the_argmax_picks_and_ties_past_the_candidates_stop_the_run() -> None:
    outcomes = [_case(seed) for seed in range(400)]
    assert sum(placed == wanted for placed, wanted in outcomes) > 300
    assert any(placed < wanted for placed, wanted in outcomes)  # a tie reached past the candidates
