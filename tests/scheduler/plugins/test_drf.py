"""drf: job order by dominant share, and preemption only from a job whose share is not smaller."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler import configure
from scheduler.api import building
from scheduler.framework import session
from scheduler.plugins import drf
from tests.builders import scheduler as b
from tests.support import scenarios

LATER = "2025-01-01T00:10:00Z"
Q = [b.queue()]
NO_DRF = (
    'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n'
    "- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}, {name: nodeorder}]\n"
)
# drf alone judges victims: no priority plugin in the first tier.
PREEMPT = (
    'actions: "enqueue, allocate, preempt"\ntiers:\n- plugins: [{name: gang}, {name: drf}]\n'
    "- plugins: [{name: predicates}, {name: proportion}]\n"
)
PREEMPT_OFF = PREEMPT.replace("{name: drf}", "{name: drf, enablePreemptable: false}")


def running(job: str, count: int, node: str, *, cpu: str = "1", memory: str | None = None) -> list[dict[str, object]]:
    return [
        b.pod(f"{job}{i}", group=job, cpu=cpu, memory=memory, node=node, created=f"2025-01-01T00:00:0{i}Z")
        for i in range(count)
    ]


# Two running jobs, each asking for one more pod that only one of them can get: "mem" holds half
# of the memory (share 0.5), "cpu" three eighths of the cpu (share 0.375) though more cores.
MIXED = {
    "nodes": [b.node("n1", cpu="8", memory="32Gi")],
    "pods": running("mem", 1, "n1", memory="16Gi")
    + running("cpu", 1, "n1", cpu="3", memory="4Gi")
    + [
        b.pod("mem-more", group="mem", cpu="2", memory="8Gi", created=LATER),
        b.pod("cpu-more", group="cpu", cpu="2", memory="8Gi", created=LATER),
    ],
    "podgroups": [
        b.podgroup("mem", min_member=1, phase="Running"),
        b.podgroup("cpu", min_member=1, phase="Running", created=LATER),
    ],
}

SCENARIOS = [
    scenarios.Scenario(
        id="a-job-without-a-share-goes-before-a-running-one",
        nodes=[b.node("n1"), b.node("n2", cpu="2")],
        pods=[b.pod(f"r{i}", group="g", cpu="2", node="n1") for i in range(2)]
        + [b.pod("replacement", group="g", cpu="2", created=LATER), b.pod("fresh", group="f", cpu="2", created=LATER)],
        podgroups=[b.podgroup("g", min_member=3, phase="Running"), b.podgroup("f", created=LATER)],
        queues=Q,
        binds={"fresh": "n2"},
        phases={"f": "Running"},
    ),
    scenarios.Scenario(
        id="the-dominant-resource-decides-not-cpu-alone",
        **MIXED,  # type: ignore[arg-type]
        queues=Q,
        binds={"cpu-more": "n1"},
    ),
    scenarios.Scenario(
        id="without-drf-creation-decides",
        **MIXED,  # type: ignore[arg-type]
        queues=Q,
        conf=NO_DRF,
        binds={"mem-more": "n1"},
    ),
    scenarios.Scenario(
        id="preempts-from-a-job-whose-share-stays-as-large",
        nodes=[b.node("n1")],
        pods=running("l", 3, "n1") + running("s", 1, "n1") + [b.pod("s-more", group="s", cpu="1", created=LATER)],
        podgroups=[b.podgroup("l", min_member=1, phase="Running"), b.podgroup("s", min_member=2, phase="Running")],
        queues=Q,
        conf=PREEMPT,
        binds={},
        evictions=frozenset({"l2"}),
        pipelined={"s-more": "n1"},
    ),
    scenarios.Scenario(
        id="never-preempts-from-a-job-with-a-smaller-share",
        nodes=[b.node("n1")],
        pods=running("l", 2, "n1") + running("s", 2, "n1") + [b.pod("s-more", group="s", cpu="1", created=LATER)],
        podgroups=[b.podgroup("l", min_member=1, phase="Running"), b.podgroup("s", min_member=3, phase="Running")],
        queues=Q,
        conf=PREEMPT,
        binds={},
        evictions=frozenset(),
    ),
    scenarios.Scenario(
        id="enable-preemptable-false-leaves-drf-out-of-preemption",
        nodes=[b.node("n1")],
        pods=running("l", 2, "n1") + running("s", 2, "n1") + [b.pod("s-more", group="s", cpu="1", created=LATER)],
        podgroups=[b.podgroup("l", min_member=1, phase="Running"), b.podgroup("s", min_member=3, phase="Running")],
        queues=Q,
        conf=PREEMPT_OFF,
        binds={},
        evictions=frozenset({"l1"}),
        pipelined={"s-more": "n1"},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_drf(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)


def test_shares_leave_out_pods_and_resources_the_cluster_lacks() -> None:
    snap = building.build(
        nodes=MIXED["nodes"], pods=MIXED["pods"], podgroups=MIXED["podgroups"], queues=Q, priorityclasses=[]
    )
    conf = configure.parse("")
    ssn = session.Session(snap, conf, scenarios.NOW)
    plugin = drf.Drf(conf.plugin("drf"), ssn)  # type: ignore[arg-type]
    assert plugin.job_share("ns/mem") == pytest.approx(0.5) and plugin.job_share("ns/cpu") == pytest.approx(0.375)
    # Pods are no resource drf shares out.
    vec = np.zeros(len(ssn.dims))
    vec[ssn.dims.index("pods")] = 100
    assert plugin.share(vec) == 0.0
