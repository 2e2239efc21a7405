"""explain on the native backend's queue half: the level of the queue tree whose share holds a
group at our gate, the whole gangs a reclaimer has evicted, and the group sent back to admission."""

from __future__ import annotations

from scheduler.tools import explain, report
from tests.scheduler.actions import test_nativereclaim as reclaiming
from tests.scheduler.plugins import test_capacity_native as tree
from tests.support import scenarios


def _scenario(found: list[scenarios.Scenario], id: str) -> scenarios.Scenario:
    return next(s for s in found if s.id == id)


def test_explain_names_the_level_whose_share_holds_a_native_group() -> None:
    s = _scenario(tree.SCENARIOS, "every-level-holds-its-deserved-under-contention")
    exp = explain.explain(s.snapshot(), s.config(), "ns/a2")
    assert exp.enqueue is not None and exp.enqueue.refused_by == "capacity"
    assert "its ancestor eng's deserved share at admission (cpu 8 + 4 > 8" in exp.verdict
    assert "tree root/eng/eng-a" in report.render(exp)


def test_explain_lists_the_whole_gang_reclaimed_and_says_where_the_victim_stands() -> None:
    s = _scenario(reclaiming.SCENARIOS, "evicts-a-whole-gang-and-admits-the-reclaimer")
    snap, conf = s.snapshot(), s.config()
    reclaimer, victim = explain.explain_all(snap, conf, ["ns/b", "ns/a1"])
    assert reclaimer.next_phase == "Inqueue"
    assert {(e.pod, e.podgroup, e.reason) for e in reclaimer.evictions} == {
        ("ns/a1-0", "ns/a1", "Reclaimed"),
        ("ns/a1-1", "ns/a1", "Reclaimed"),
    }
    assert all("the whole of ns/a1" in e.why and "queue qa" in e.why for e in reclaimer.evictions)
    assert victim.next_phase == "Pending"
    assert victim.verdict.startswith("not admitted: sent back to admission: its pods were reclaimed for PodGroup ns/b")
