"""explain names, for a group waiting on preemption or reclaim, which pods of which jobs the cycle
evicts for it and why (gang-level: surplus or the whole job; priority, or the queue reclaimed
from); a group whose gang cannot fit even with every victim gone gets no evictions listed."""

from __future__ import annotations

import json

import pytest

from scheduler.tools import explain, report
from tests.builders import scheduler as b
from tests.support import scenarios

LATER = "2025-01-01T00:10:00Z"


def _pods(group: str, node: str, first: int, count: int) -> list:
    return [
        b.pod(f"{group}{i}", group=group, cpu="1", memory=None, node=node, created=f"2025-01-01T00:0{i}:00Z")
        for i in range(first, first + count)
    ]


def _pending(group: str, count: int, cpu: str) -> list:
    return [b.pod(f"{group}{i}", group=group, cpu=cpu, memory=None, created=LATER) for i in range(count)]


PREEMPT = scenarios.Scenario(
    id="explain-gangpreempt-surplus-and-whole",
    nodes=[b.node("n1"), b.node("n2")],
    pods=_pods("l", "n1", 0, 4)
    + _pods("m", "n2", 0, 2)
    + _pods("c", "n2", 2, 2)
    + _pending("h", 1, "2")
    + _pending("k", 1, "2"),
    podgroups=[
        b.podgroup("l", min_member=2, phase="Running"),
        b.podgroup("m", min_member=2, phase="Running"),
        b.podgroup("c", min_member=2, phase="Running", created="2025-01-01T00:01:00Z"),
        b.podgroup("h", priority_class="high", created=LATER),
        b.podgroup("k", priority_class="high", created=LATER),
    ],
    queues=[b.queue()],
    priorityclasses=[b.priority_class("high", 1000)],
    conf='actions: "enqueue, allocate, gangpreempt"',
    pipelined={"h0": "n1", "k0": "n2"},
)
RECLAIM = scenarios.Scenario(
    id="explain-gangreclaim-names-the-queue",
    nodes=[b.node("n1")],
    pods=_pods("a", "n1", 0, 4) + _pending("b", 2, "1"),
    podgroups=[
        b.podgroup("a", min_member=2, queue="qa", phase="Running"),
        b.podgroup("b", min_member=2, queue="qb", created=LATER),
    ],
    queues=[b.queue("qa"), b.queue("qb")],
    conf='actions: "enqueue, allocate, gangreclaim"',
    evictions=frozenset({"a3", "a2"}),
)


def _explain(scenario: scenarios.Scenario, group: str) -> explain.Explanation:
    return explain.explain(scenario.snapshot(), scenario.config(), group, scenario.now)


@pytest.mark.parametrize(
    ("scenario", "group", "expected"),
    [
        # h takes l's two surplus replicas; then k finds no surplus left: the newest whole job, c, goes
        (
            PREEMPT,
            "ns/h",
            {f"ns/l{i}": ("ns/l", "surplus of ns/l above minMember 2; job priority 0 < 1000") for i in (2, 3)},
        ),
        (PREEMPT, "ns/k", {"ns/c2": ("ns/c", "the whole of ns/c"), "ns/c3": ("ns/c", "the whole of ns/c")}),
        (RECLAIM, "ns/b", {"ns/a3": ("ns/a", "reclaimed from queue qa"), "ns/a2": ("ns/a", "reclaimed from queue qa")}),
    ],
)
def test_explain_lists_the_evictions_made_for_the_group(
    scenario: scenarios.Scenario, group: str, expected: dict[str, tuple[str, str]]
) -> None:
    scenarios.assert_expected(scenario)
    exp = _explain(scenario, group)
    assert {v.pod: v.podgroup for v in exp.evictions} == {pod: job for pod, (job, _) in expected.items()}
    for victim in exp.evictions:
        assert expected[victim.pod][1] in victim.why, victim
    text = report.render(exp)
    assert f"to make room, the cycle evicts {len(expected)} pod(s):" in text, text
    for victim in exp.evictions:
        assert f"{victim.pod} (of {victim.podgroup}, on {victim.node}): {victim.reason}: {victim.why}" in text
    listed = json.loads(json.dumps(report.to_json(exp)))["evictions"]
    assert sorted(e["pod"] for e in listed) == sorted(expected)


NOTHING = scenarios.Scenario(
    id="explain-gangpreempt-nothing-for-a-gang-that-cannot-fit",
    nodes=[b.node("n1")],
    pods=_pods("l", "n1", 0, 4) + _pending("h", 2, "3"),
    podgroups=[b.podgroup("l", phase="Running"), b.podgroup("h", min_member=2, priority_class="high")],
    queues=[b.queue()],
    priorityclasses=[b.priority_class("high", 1000)],
    conf='actions: "enqueue, allocate, gangpreempt"',
    evictions=frozenset(),
)


def test_a_gang_that_cannot_fit_lists_no_evictions() -> None:
    scenarios.assert_expected(NOTHING)
    exp = _explain(NOTHING, "ns/h")
    assert exp.evictions == () and "evicts" not in report.render(exp)
    assert report.to_json(exp)["evictions"] == []


SCENARIOS = [PREEMPT, RECLAIM, NOTHING]  # explain agrees with the cycle on these too (tools/test_explain_agrees)
