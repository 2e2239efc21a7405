"""explain: scenarios (cluster as API dicts) → the facts the explanation must state."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from bridge import errors
from scheduler import configure
from scheduler.api import building
from scheduler.tools import explain, report, workloads
from tests.builders import scheduler as b

SIXTEENS = [b.node(f"n{i}", cpu="16", memory="64Gi") for i in range(4)]


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    nodes: Sequence[Mapping[str, Any]]
    pods: Sequence[Mapping[str, Any]]
    podgroups: Sequence[Mapping[str, Any]]
    queues: Sequence[Mapping[str, Any]] = (b.queue(),)
    group: str = "ns/pg"
    state: str = ""
    next_phase: str | None = None
    failures: Mapping[str, int] = dataclasses.field(default_factory=dict)  # reason → nodes (first shape)
    fit: int | None = None
    needed: int | None = None
    fit_nodes: Mapping[str, int] | None = None
    admitted: bool | None = None  # None: the group was already admitted (no enqueue facts)
    refused_by: str | None = None
    shortfall: str | None = None
    free_up: str | None = None
    deserved_cpu: int | None = None  # millicores
    verdict: str = ""
    text: tuple[str, ...] = ()  # in the rendered report
    not_text: tuple[str, ...] = ()  # not in it

    def run(self) -> explain.Explanation:
        snap = building.build(nodes=self.nodes, pods=self.pods, podgroups=self.podgroups, queues=self.queues)
        return explain.explain(snap, configure.default(), self.group)


CASES = [
    Case(
        id="gang-one-short-on-cpu",
        nodes=[b.node("n1", cpu="4"), b.node("n2", cpu="4")],
        pods=[b.pod(f"p{i}", cpu="3") for i in range(3)],
        podgroups=[b.podgroup("pg", min_member=3, phase="Inqueue")],
        state="waiting",
        next_phase="Inqueue",
        fit=2,
        needed=3,
        fit_nodes={"n1": 1, "n2": 1},
        free_up="cpu=3000m, memory=1024Mi, pods=1",  # one more 3-cpu task: the third member
        verdict="waits for resources: only 2 of the 3 task(s) minMember needs fit now",
        text=("to run, at least this must free up on fitting nodes: cpu 3, memory 1Gi, pods 1", "n1×1, n2×1"),
    ),
    Case(
        id="selector-and-taint-counted-per-predicate",
        nodes=[
            b.node("a", labels={"zone": "z1"}),
            b.node("b", labels={"zone": "z2"}),
            b.node("c", labels={"zone": "z1"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
            b.node("d", labels={"zone": "z1"}, ready=False),
            b.node("e", labels={"zone": "z1"}, cpu="1"),
        ],
        pods=[b.pod(f"p{i}", cpu="3", spec={"nodeSelector": {"zone": "z1"}}) for i in range(2)],
        podgroups=[b.podgroup("pg", min_member=2, phase="Inqueue")],
        state="waiting",
        failures={
            "node(s) didn't match Pod's node affinity/selector": 1,
            "node(s) had untolerated taint": 1,
            "node(s) were not ready": 1,
            "Insufficient cpu": 1,
        },
        fit=1,
        needed=2,
        verdict="only 1 of the 2 task(s)",
    ),
    Case(
        # The spread predicate is named: zone a holds a matching pod already, zone b has no room.
        id="topology-spread-counted-as-a-predicate",
        nodes=[
            b.node("a1", labels={"zone": "a"}),
            b.node("a2", labels={"zone": "a"}),
            b.node("b1", labels={"zone": "b"}, cpu="1"),
        ],
        pods=[
            b.pod("old", group=None, node="a1", labels={"app": "w"}, scheduler="default-scheduler"),
            b.pod(
                "p0",
                cpu="2",
                labels={"app": "w"},
                spec={
                    "topologySpreadConstraints": [
                        {"maxSkew": 1, "topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "w"}}}
                    ]
                },
            ),
        ],
        podgroups=[b.podgroup("pg", phase="Inqueue")],
        state="waiting",
        failures={"node(s) didn't match pod topology spread constraints": 2, "Insufficient cpu": 1},
        text=("node(s) didn't match pod topology spread constraints",),
    ),
    Case(
        id="pending-group-blocked-by-inqueue-reservation",
        nodes=[b.node("n1", cpu="10")],
        pods=[b.pod("big0", group="big", cpu="1"), b.pod("p0", cpu="4")],
        podgroups=[
            b.podgroup("big", min_member=1, min_resources={"cpu": "9"}, phase="Inqueue"),
            b.podgroup("pg", min_member=1, min_resources={"cpu": "4"}),
        ],
        # idle 10 × 1.2 = 12 cpu; big still reserves 9; 9 + 4 > 12 → short by 1 cpu.
        state="not-admitted",
        next_phase="Pending",
        admitted=False,
        refused_by="overcommit",
        shortfall="cpu=1000m",
        verdict="not admitted: enqueue's overcommit says no",
        text=("enqueue: refused by overcommit: minResources cpu 4", "short by: cpu 1", "ns/big: cpu 9"),
    ),
    Case(
        # Issue 15: explain said "admissible" (overcommit only); proportion's capability says no.
        id="min-resources-beyond-the-queue-capability",
        nodes=SIXTEENS,
        pods=[b.pod(f"p{i}", cpu="14") for i in range(5)],
        podgroups=[b.podgroup("pg", min_member=5, min_resources={"cpu": "70"})],
        state="not-admitted",
        next_phase="Pending",
        admitted=False,
        refused_by="proportion",
        verdict="not admitted: enqueue's proportion says no: minResources (cpu 70) do not fit queue default's",
        text=("queue default's real capability: cpu 64", "beyond it by: cpu 6"),
        not_text=("70000m", "admissible"),
    ),
    Case(
        id="pending-group-admitted-and-placed",
        nodes=[b.node("n1", cpu="10")],
        pods=[b.pod("p0", cpu="4")],
        podgroups=[b.podgroup("pg", min_member=1, min_resources={"cpu": "4"})],
        state="placed",
        next_phase="Running",
        admitted=True,
        fit=1,
        needed=1,
        verdict="the cycle places it now: 1 pod(s)",
        not_text=("nodes (", "best partial fit", "enqueue:"),
    ),
    Case(
        id="queue-share-by-weight",
        nodes=[b.node("n1", cpu="8", memory="64Gi")],
        pods=[b.pod(f"a{i}", group="a", cpu="2") for i in range(4)] + [b.pod(f"p{i}", cpu="2") for i in range(4)],
        podgroups=[
            b.podgroup("a", min_member=4, queue="qa", phase="Inqueue"),
            b.podgroup("pg", min_member=4, queue="qb", phase="Inqueue"),
        ],
        queues=[b.queue("qa", weight=3), b.queue("qb", weight=1)],
        deserved_cpu=2000,  # 8 cpu split 3:1
        fit=4,
        needed=4,
    ),
    Case(
        id="running-group-extra-member-prints-no-empty-sections",
        nodes=[b.node("n1", cpu="2")],
        pods=[b.pod("r0", cpu="2", node="n1"), b.pod("extra", cpu="2")],
        podgroups=[b.podgroup("pg", min_member=1, phase="Running")],
        state="running",
        failures={"Insufficient cpu": 1},
        fit=0,
        needed=0,
        verdict="minMember is met",
        not_text=("nodes (", "best partial fit", "free up", "enqueue"),
    ),
    Case(
        id="pod-larger-than-any-node-can-never-run",
        nodes=[b.node(f"n{i}", cpu="32", memory="128Gi") for i in range(2)],
        pods=[b.pod("w0", cpu="40", task="worker")],
        podgroups=[b.podgroup("pg", min_resources={"cpu": "40"})],
        state="never",
        next_phase="Pending",
        admitted=False,
        refused_by="never",
        verdict="can never run here: task worker needs cpu 40 but the largest node has 32",
        text=("never: task worker needs cpu 40 but the largest node has 32",),
        not_text=("must free up", "best partial fit"),
    ),
    Case(
        id="selector-no-node-matches-can-never-run",
        nodes=SIXTEENS,
        pods=[b.pod("w0", task="worker", spec={"nodeSelector": {"gpu": "a100"}})],
        podgroups=[b.podgroup("pg", phase="Inqueue")],  # admitted before: goes back to Pending
        state="never",
        next_phase="Pending",
        verdict="can never run here: task worker: no node matches nodeSelector gpu=a100",
    ),
    Case(
        id="gpus-on-a-cluster-without-gpus",
        nodes=SIXTEENS,
        pods=[b.pod("w0", gpu=1, task="worker")],
        podgroups=[b.podgroup("pg")],
        state="never",
        admitted=False,
        refused_by="never",
        verdict="needs nvidia.com/gpu 1 but no node has any",
    ),
    Case(
        id="pods-of-a-tfjob-not-created-yet",
        nodes=SIXTEENS,
        pods=[],
        podgroups=[b.podgroup("pg", min_member=4, owner=("TFJob", "mnist"))],
        state="no-pods",
        admitted=True,
        verdict="0 of 4 pods exist: the Kubeflow training-operator has not created them",
        text=("PodGroup ns/pg (of TFJob mnist)",),
        not_text=("nowhere", "0 of 0"),
    ),
    Case(
        id="pods-of-a-volcano-job-not-created-yet",
        nodes=SIXTEENS,
        pods=[],
        podgroups=[b.podgroup("pg", min_member=2, owner=("Job", "train"), min_resources={"cpu": "100"})],
        state="no-pods",
        admitted=False,
        refused_by="overcommit",
        verdict="0 of 2 pods exist: the Volcano Job controller (vbridge controllers) has not created them",
    ),
    Case(
        id="executors-of-a-spark-driver-not-created-yet",
        nodes=SIXTEENS,
        pods=[b.pod("driver", node="n0", labels={"spark-role": "driver"})],
        podgroups=[b.podgroup("pg", min_member=3, owner=("Pod", "driver"), phase="Inqueue")],
        state="no-pods",
        verdict="1 of 3 pods exist: the Spark driver driver has not created its executors yet",
    ),
    Case(
        id="ephemeral-storage-printed-in-bytes",
        nodes=[b.node("n1", cpu="4")],
        pods=[b.pod("p0", cpu="8", spec={"overhead": {"ephemeral-storage": "5277660000000"}})],
        podgroups=[b.podgroup("pg", phase="Inqueue")],
        state="never",
        text=("ephemeral-storage 4.8Ti",),
        not_text=("e+12",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_explain(case: Case) -> None:
    exp = case.run()
    if case.state:
        assert exp.state == case.state, exp.verdict
    if case.next_phase is not None:
        assert exp.next_phase == case.next_phase
    if case.failures:
        assert dict(exp.shapes[0].failures) == dict(case.failures)
    if case.fit is not None:
        assert exp.fit == case.fit
    if case.needed is not None:
        assert exp.needed == case.needed
    if case.fit_nodes is not None:
        assert dict(exp.fit_nodes) == dict(case.fit_nodes)
    if case.admitted is None:
        assert exp.enqueue is None
    else:
        assert exp.enqueue is not None and exp.enqueue.admitted is case.admitted
        assert exp.enqueue.refused_by == case.refused_by
        if case.shortfall is not None:
            assert str(exp.enqueue.shortfall) == case.shortfall
    if case.free_up is not None:
        assert str(exp.free_up) == case.free_up
    if case.deserved_cpu is not None:
        assert exp.queue.deserved.cpu == case.deserved_cpu
    assert case.verdict in exp.verdict
    text = report.render(exp)
    assert text.startswith(f"PodGroup {case.group}") and exp.verdict in text
    for part in case.text:
        assert part in text, text
    for part in case.not_text:
        assert part not in text, text
    assert json.loads(json.dumps(report.to_json(exp)))["state"] == exp.state


def test_unknown_podgroup_is_an_error() -> None:
    snap = building.build(nodes=[b.node("n1")], pods=[], podgroups=[], queues=[b.queue()])
    with pytest.raises(errors.BridgeError, match="podgroup ns/nope not found"):
        explain.explain(snap, configure.default(), "ns/nope")


def test_explaining_changes_nothing() -> None:
    """The snapshot is immutable and the trial placements are discarded: same answer twice."""
    case = CASES[0]
    assert case.run() == case.run()


RESOLVE_GROUPS = [
    b.podgroup("toobig-1a2b3c", owner=("Job", "toobig")),
    b.podgroup("mnist", owner=("TFJob", "mnist")),
    b.podgroup("pt-group", owner=("PyTorchJob", "pt")),
    b.podgroup("iris", owner=("XGBoostJob", "iris")),
    b.podgroup("fleet", owner=("PaddleJob", "fleet")),
    b.podgroup("spmd", owner=("JAXJob", "spmd")),
    b.podgroup("spark-pi-pg", owner=("SparkApplication", "pi")),
    b.podgroup("spark-etl-pg"),  # made by the operator before the bridge set the owner
    b.podgroup("sparkconnect-sc-pg", owner=("SparkConnect", "sc")),
    b.podgroup("sparkconnect-new-pg"),  # made, its owner not set yet
    b.podgroup("plain"),
    b.podgroup("other", namespace="elsewhere"),
]


@pytest.mark.parametrize(
    ("kind", "name", "key"),
    [
        ("vcjob", "toobig", "ns/toobig-1a2b3c"),
        ("job.batch.volcano.sh", "toobig", "ns/toobig-1a2b3c"),
        ("pg", "toobig", "ns/toobig-1a2b3c"),  # issue 15: the group is toobig-<uid>
        ("podgroup", "plain", "ns/plain"),
        ("tfjob", "mnist", "ns/mnist"),
        ("pytorchjob", "pt", "ns/pt-group"),
        ("xgboostjob", "iris", "ns/iris"),
        ("paddlejob", "fleet", "ns/fleet"),
        ("jaxjob", "spmd", "ns/spmd"),
        ("sparkapplication", "pi", "ns/spark-pi-pg"),
        ("sparkapp", "etl", "ns/spark-etl-pg"),
        ("pg", "etl", "ns/spark-etl-pg"),
        ("sparkconnect", "sc", "ns/sparkconnect-sc-pg"),
        ("sparkconnect", "new", "ns/sparkconnect-new-pg"),
        ("tfjob", "plain", "ns/plain"),  # a group nothing owns yet goes by its name
    ],
)
def test_resolve_finds_the_group_of_a_workload(kind: str, name: str, key: str) -> None:
    snap = building.build(nodes=[b.node("n1")], pods=[], podgroups=RESOLVE_GROUPS, queues=[b.queue()])
    assert workloads.resolve(snap, kind, "ns", name) == key


@pytest.mark.parametrize(
    ("kind", "name", "message"),
    [
        ("tfjob", "ghost", "no PodGroup for tfjob ns/ghost not found"),
        # issue 31: a kind named outright never falls back to another kind's group of that name
        ("vcjob", "mnist", "no PodGroup for vcjob ns/mnist not found"),
        ("pytorchjob", "mnist", "no PodGroup for pytorchjob ns/mnist not found"),
        ("jaxjob", "iris", "no PodGroup for jaxjob ns/iris not found"),  # XGBoostJob iris's, not a JAXJob's
        ("pg", "other", "podgroup ns/other not found"),
        ("deployment", "x", "unknown kind 'deployment'"),
    ],
)
def test_resolve_errors(kind: str, name: str, message: str) -> None:
    snap = building.build(nodes=[b.node("n1")], pods=[], podgroups=RESOLVE_GROUPS, queues=[b.queue()])
    with pytest.raises(errors.BridgeError, match=message):
        workloads.resolve(snap, kind, "ns", name)


CAPACITY = (
    'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    "- plugins: [{name: overcommit}, {name: predicates}, {name: capacity, enableHierarchy: true}]\n"
)
TREE = [
    b.queue("org", capability={"cpu": "6"}),
    b.queue("team", parent="org", capability={"cpu": "4"}),
    b.queue("pa", parent="team", deserved={"cpu": "2"}),
    b.queue("pb", parent="org"),
]
TEAM_FULL = [b.pod(f"r{i}", group="r", cpu="1", memory=None, node="n0") for i in range(4)]


@pytest.mark.parametrize(
    ("pods", "groups", "verdict", "level"),
    [
        (  # admitted, its pod fits a node, but team (pa's parent) is at its capability
            [*TEAM_FULL, b.pod("p0", cpu="1", memory=None)],
            [b.podgroup("r", queue="pa", phase="Running"), b.podgroup("pg", queue="pa", phase="Inqueue")],
            "waits for queue quota: the pod of queue pa would exceed its ancestor team's real capability",
            "team (holds cpu 4, pods 4; deserves nothing) > pa (holds cpu 4, pods 4; deserves cpu 2)",
        ),
        (  # pending: minResources beyond org's capability, though pb itself has none
            [b.pod("p0", cpu="1", memory=None)],
            [b.podgroup("pg", queue="pb", min_resources={"cpu": "7"})],
            "minResources of queue pb would exceed its ancestor org's real capability (cpu 0 + 7 > 6",
            "root (holds nothing; deserves nothing) > org",
        ),
    ],
    ids=["allocate-held-back-by-a-middle-level", "enqueue-held-back-by-the-top-level"],
)
def test_explain_names_the_level_of_the_queue_tree_that_holds_a_group(
    pods: list[dict[str, Any]], groups: list[dict[str, Any]], verdict: str, level: str
) -> None:
    snap = building.build(nodes=SIXTEENS, pods=pods, podgroups=groups, queues=TREE)
    exp = explain.explain(snap, configure.parse(CAPACITY), "ns/pg")
    assert verdict in exp.verdict
    text = report.render(exp)
    assert "queue tree: " in text and level in text, text
    assert json.loads(json.dumps(report.to_json(exp)))["queue"]["limit"] == exp.queue.limit
