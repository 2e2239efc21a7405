"""feasibility: work that can never run on this cluster's nodes is never admitted and says why.

Issue 14: a pod larger than any node, a nodeSelector no node matches, GPUs on a cluster without
any were admitted Inqueue, reserved their minResources for ever and read "waits for resources".
"""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

LATER = "2025-01-01T00:10:00Z"
BIG = [b.node(f"n{i}", cpu="32", memory="128Gi") for i in range(2)]  # 64 cpu; ×1.2 = 76.8 admissible
NO_ENQUEUE = 'actions: "allocate, backfill"\n'


def workers(group: str, count: int, cpu: str, **pod: object) -> list[dict[str, object]]:
    return [b.pod(f"{group}{i}", group=group, cpu=cpu, memory="1Gi", task="worker", **pod) for i in range(count)]  # type: ignore[arg-type]


SCENARIOS = [
    scenarios.Scenario(
        id="pod-larger-than-any-node-is-never-admitted-and-reserves-nothing",
        nodes=BIG,
        pods=workers("huge", 1, "40") + workers("other", 2, "30", created=LATER),
        podgroups=[
            b.podgroup("huge", min_member=1, min_resources={"cpu": "40"}),
            # 40 + 60 > 76.8: were huge admitted, other would wait behind its reservation.
            b.podgroup("other", min_member=2, min_resources={"cpu": "60"}, created=LATER),
        ],
        queues=[b.queue()],
        bound_counts={"huge": 0, "other": 2},
        phases={"huge": "Pending", "other": "Running"},
        conditions={"huge": ("Unschedulable", "NeverFits", "task worker needs cpu 40 but the largest node has 32")},
        pod_events={"huge0": ("Unschedulable", "needs cpu 40 but the largest node has 32")},
        queue_states={"default": ("Open", 1, 0)},
    ),
    scenarios.Scenario(
        id="node-selector-no-node-matches",
        nodes=BIG,
        pods=workers("sel", 2, "1", spec={"nodeSelector": {"gpu": "a100"}}),
        podgroups=[b.podgroup("sel", min_member=2)],
        queues=[b.queue()],
        binds={},
        phases={"sel": "Pending"},
        conditions={"sel": ("Unschedulable", "NeverFits", "task worker: no node matches nodeSelector gpu=a100")},
    ),
    scenarios.Scenario(
        id="required-affinity-no-node-matches",
        nodes=BIG,
        pods=workers(
            "aff",
            1,
            "1",
            spec={
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z9"]}]}
                            ]
                        }
                    }
                }
            },
        ),
        podgroups=[b.podgroup("aff")],
        queues=[b.queue()],
        phases={"aff": "Pending"},
        conditions={"aff": ("Unschedulable", "NeverFits", "no node matches node affinity zone in (z9)")},
    ),
    scenarios.Scenario(
        id="gpus-on-a-cluster-without-gpus",
        nodes=BIG,
        pods=workers("gpu", 2, "1", gpu=1),
        podgroups=[b.podgroup("gpu", min_member=2)],
        queues=[b.queue()],
        phases={"gpu": "Pending"},
        conditions={"gpu": ("Unschedulable", "NeverFits", "task worker needs nvidia.com/gpu 1 but no node has any")},
    ),
    scenarios.Scenario(
        id="big-enough-nodes-do-not-match-the-selector",
        nodes=[b.node("small", cpu="8", labels={"pool": "small"}), b.node("large", cpu="32")],
        pods=workers("mix", 1, "20", spec={"nodeSelector": {"pool": "small"}}),
        podgroups=[b.podgroup("mix")],
        queues=[b.queue()],
        phases={"mix": "Pending"},
        conditions={
            "mix": (
                "Unschedulable",
                "NeverFits",
                "task worker needs cpu 20 but the largest node that matches nodeSelector pool=small has 8",
            )
        },
    ),
    scenarios.Scenario(
        id="inqueue-group-whose-nodes-went-away-goes-back-to-pending",
        nodes=BIG,
        pods=workers("huge", 1, "40") + workers("other", 2, "30", created=LATER),
        podgroups=[
            b.podgroup("huge", min_member=1, min_resources={"cpu": "40"}, phase="Inqueue"),
            b.podgroup("other", min_member=2, min_resources={"cpu": "60"}, created=LATER),
        ],
        queues=[b.queue()],
        bound_counts={"other": 2},
        phases={"huge": "Pending", "other": "Running"},
        conditions={"huge": ("Unschedulable", "NeverFits", "largest node has 32")},
    ),
    scenarios.Scenario(
        id="running-gang-short-of-minmember-keeps-its-phase-and-says-why",
        nodes=BIG,
        pods=[b.pod("part0", group="part", cpu="4", node="n0"), b.pod("part1", group="part", cpu="40", task="tail")],
        podgroups=[b.podgroup("part", min_member=2, phase="Running")],
        queues=[b.queue()],
        binds={},
        phases={"part": "Unknown"},
        conditions={"part": ("Unschedulable", "NeverFits", "task tail needs cpu 40")},
    ),
    scenarios.Scenario(
        id="an-extra-member-that-never-fits-does-not-stop-a-met-gang",
        nodes=BIG,
        pods=[*workers("gang", 2, "4"), b.pod("gang-extra", group="gang", cpu="40", task="worker")],
        podgroups=[b.podgroup("gang", min_member=2)],
        queues=[b.queue()],
        bound_counts={"gang0": 1, "gang1": 1, "gang-extra": 0},
        phases={"gang": "Running"},
    ),
    scenarios.Scenario(
        id="min-task-member-of-a-task-that-never-fits",
        nodes=BIG,
        pods=[b.pod("ps0", group="tf", cpu="64", task="ps")]
        + [b.pod(f"w{i}", group="tf", cpu="1", task="worker") for i in range(2)],
        podgroups=[b.podgroup("tf", min_member=2, min_task_member={"ps": 1})],
        queues=[b.queue()],
        binds={},
        phases={"tf": "Pending"},
        conditions={"tf": ("Unschedulable", "NeverFits", "task ps needs cpu 64 but the largest node has 32")},
    ),
    scenarios.Scenario(
        id="without-enqueue-a-never-fitting-gang-stays-pending",
        conf=NO_ENQUEUE,
        nodes=BIG,
        pods=workers("huge", 2, "40"),
        podgroups=[b.podgroup("huge", min_member=2)],
        queues=[b.queue()],
        binds={},
        phases={"huge": "Pending"},
        conditions={"huge": ("Unschedulable", "NeverFits", "(2 pods can never run here)")},
    ),
    scenarios.Scenario(
        # Each pod fits a node, but minResources exceed the cluster: proportion's capability
        # refuses it (the case issue 15 quotes), as before. Not "never": packing is not static.
        id="min-resources-beyond-the-cluster-stay-pending",
        nodes=[b.node(f"n{i}", cpu="16", memory="64Gi") for i in range(4)],
        pods=workers("wide", 5, "14"),
        podgroups=[b.podgroup("wide", min_member=5, min_resources={"cpu": "70"})],
        queues=[b.queue()],
        binds={},
        phases={"wide": "Pending"},
        conditions={"wide": ("Unschedulable", "NotEnoughResources", "queue default's capability (proportion)")},
    ),
    scenarios.Scenario(
        id="cordoned-and-not-ready-nodes-are-waited-for",
        nodes=[b.node("n0", cpu="32", unschedulable=True), b.node("n1", cpu="32", ready=False)],
        pods=workers("wait", 1, "20"),
        podgroups=[b.podgroup("wait")],
        queues=[b.queue()],
        binds={},
        phases={"wait": "Inqueue"},
        conditions={"wait": ("Unschedulable", "NotEnoughResources", "pod group is not ready")},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_feasibility(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
