"""nodeorder spreads by default (least allocated); binpack packs; weights come from the conf."""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

BINPACK = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins:
  - {name: overcommit}
  - {name: predicates}
  - {name: proportion}
  - {name: binpack, arguments: {binpack.weight: 10}}
"""
MOST = """
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: nodeorder, arguments: {leastrequested.weight: 0, mostrequested.weight: 1}}]
"""
PODS = [b.pod("p0", cpu="1"), b.pod("p1", cpu="1")]
COMMON = {
    "nodes": [b.node("n1"), b.node("n2")],
    "pods": PODS,
    "podgroups": [b.podgroup("pg", min_member=2)],
    "queues": [b.queue()],
}

SCENARIOS = [
    scenarios.Scenario(id="default-spreads", **COMMON, binds={"p0": "n1", "p1": "n2"}),
    scenarios.Scenario(id="binpack-packs", **COMMON, conf=BINPACK, binds={"p0": "n1", "p1": "n1"}),
    scenarios.Scenario(id="nodeorder-most-requested-packs", **COMMON, conf=MOST, binds={"p0": "n1", "p1": "n1"}),
    scenarios.Scenario(
        id="binpack-prefers-fuller-node",
        nodes=[b.node("n1"), b.node("n2")],
        pods=[b.pod("old", group="old", cpu="2", node="n2"), b.pod("p0", cpu="1")],
        podgroups=[b.podgroup("old", phase="Running"), b.podgroup("pg")],
        queues=[b.queue()],
        conf=BINPACK,
        binds={"p0": "n2"},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_nodeorder(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
