"""Tasks that differ only in their pod terms' selectors share one placement entry, and the plan
is the one a placer keeping an entry per ``Task.shape`` gives (``Placer._key``)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api import building
from scheduler.framework import placement
from tests.builders import scheduler as b
from tests.support import scenarios

ZONE, HOST = "zone", "kubernetes.io/hostname"


def _term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def _spread(app: str, key: str, when: str) -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": when, "labelSelector": {"matchLabels": {"app": app}}}


KINDS = (
    lambda app: {"topologySpreadConstraints": [_spread(app, ZONE, "DoNotSchedule")]},
    lambda app: {
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(app, HOST)]}}
    },
    lambda app: {
        "affinity": {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": _term(app, ZONE)}]
            }
        },
        "topologySpreadConstraints": [_spread(app, HOST, "ScheduleAnyway")],
    },
    lambda app: {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(app, ZONE)]}}},
    lambda app: {},
)


def _workload(gangs: int) -> dict[str, Any]:
    nodes = [b.node(f"n{i}", cpu="8", memory="32Gi", labels={ZONE: f"z{i % 3}"}) for i in range(12)]
    pods, groups = [], []
    for g in range(gangs):
        app = f"g{g}"
        cpu = ("1", "2")[g % 2]
        spec = KINDS[g % len(KINDS)](app)
        pods += [b.pod(f"{app}-{k}", group=app, cpu=cpu, labels={"app": app}, spec=spec) for k in range(4)]
        groups.append(b.podgroup(app, min_member=4))
    return {"nodes": nodes, "pods": pods, "podgroups": groups, "queues": [b.queue()]}


@pytest.mark.interpreted
def test_selectors_alone_share_an_entry() -> None:
    snap = building.build(**_workload(10))
    placer = placement.Placer.__new__(placement.Placer)
    placer._local, placer._locals = {}, {}
    keys: dict[tuple[object, str], set[int]] = {}
    for task in snap.tasks.values():
        kind = int(task.job.rsplit("g", 1)[1]) % len(KINDS)
        local = {0: "hard spread on zone", 3: "required affinity on zone"}.get(kind, "node-local alike")
        keys.setdefault((task.request, local), set()).add(placer._key(task))
    assert all(len(found) == 1 for found in keys.values())  # one entry per request and node selection
    assert len({k for found in keys.values() for k in found}) == len(keys) == 6
    assert len({task.shape for task in snap.tasks.values()}) == 10  # a shape per gang: its own selectors


@pytest.mark.interpreted
@pytest.mark.parametrize("gangs", [5, 10, 20])
def test_shared_entries_change_no_plan(gangs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _workload(gangs)
    shared = scenarios.schedule(data)
    assert shared.binds()
    monkeypatch.setattr(placement.Placer, "_key", lambda self, task: task.shape)
    assert scenarios.schedule(data) == shared
