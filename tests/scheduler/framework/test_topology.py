"""topology: pods per row and domain follow placements, rollbacks and evictions in the session."""

from __future__ import annotations

import numpy as np

from scheduler.api import building, podspec
from scheduler.framework import topology
from tests.builders import scheduler as b

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SPREAD = {
    "topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "w"}}},
    ]
}


def _topology(pods: list[dict[str, object]]) -> topology.Topology:
    nodes = [b.node("a1", labels={ZONE: "a"}), b.node("a2", labels={ZONE: "a"}), b.node("x")]
    return topology.Topology(building.build(nodes=nodes, pods=pods, podgroups=[b.podgroup("pg")], queues=[b.queue()]))


def _selector(app: str) -> tuple[podspec.PodSelector, ...]:
    return (podspec.PodSelector(podspec.Namespaces(frozenset({"ns"})), podspec.matches({"matchLabels": {"app": app}})),)


def test_no_pod_terms_keeps_nothing() -> None:
    topo = _topology([b.pod("p0", labels={"app": "w"})])
    assert not topo.active
    topo.add(0, next(iter(topo.snapshot.tasks.values())))  # returns at once


def test_counts_start_from_pods_on_nodes_and_follow_the_session() -> None:
    topo = _topology(
        [
            b.pod("old", group=None, node="a1", labels={"app": "w"}, scheduler="default-scheduler"),
            b.pod("p0", labels={"app": "w"}, spec=SPREAD),
            b.pod("p1", labels={"app": "w"}),
        ]
    )
    assert topo.active
    ids, size = topo.ids(ZONE)
    assert (ids.tolist(), size) == ([0, 0, 1], 1)  # x has no zone: the extra domain
    count = topo.count(_selector("w"), live=True)
    assert topo.domain(count, ZONE).tolist() == [1, 0]
    p1 = topo.snapshot.tasks["ns/p1"]
    topo.add(1, p1)
    assert count.rows.tolist() == [1, 1, 0] and topo.domain(count, ZONE).tolist() == [2, 0]
    topo.add(2, topo.snapshot.tasks["ns/p0"])  # on the node without the label: its domain stays 0
    assert topo.domain(count, ZONE).tolist() == [2, 0]
    topo.drop(1, p1)
    assert topo.domain(count, ZONE).tolist() == [1, 0]
    assert np.array_equal(topo.per_row(topo.domain(count, ZONE), ZONE), [1, 1, 0])


def test_a_count_asked_for_late_includes_this_cycles_pods() -> None:
    topo = _topology([b.pod("p0", labels={"app": "w"}, spec=SPREAD), b.pod("p1", labels={"app": "v"})])
    topo.add(0, topo.snapshot.tasks["ns/p1"])
    assert topo.count(_selector("v")).rows.tolist() == [1, 0, 0]


def test_evicted_pods_leave_live_counts_only() -> None:
    pods = [b.pod("old", node="a1", labels={"app": "w"}), b.pod("p0", labels={"app": "w"}, spec=SPREAD)]
    topo = _topology(pods)
    old = topo.snapshot.tasks["ns/old"]
    live, every = topo.count(_selector("w"), live=True), topo.count(_selector("w"))
    topo.evict(0, old)
    assert (live.rows[0], every.rows[0]) == (0, 1)
    topo.unevict(0, old)
    assert (live.rows[0], every.rows[0]) == (1, 1)


def test_held_terms_match_the_pods_they_concern() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}
    guard = {"affinity": {"podAntiAffinity": {podspec.REQUIRED: [term]}}}
    topo = _topology(
        [
            b.pod("guard", group=None, node="a2", labels={"app": "g"}, scheduler="default-scheduler", spec=guard),
            b.pod("web", labels={"app": "web"}),
            b.pod("db", labels={"app": "db"}),
        ]
    )
    held = topo.held(topo.snapshot.tasks["ns/web"])
    ((found, holders),) = held[topology.REQUIRED_ANTI]
    assert found.topology_key == ZONE and holders.rows.tolist() == [0, 1, 0]
    assert not topo.held(topo.snapshot.tasks["ns/db"])


def test_pods_labelled_alike_share_lookups_and_count_apart() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}
    guard = {"affinity": {"podAntiAffinity": {podspec.REQUIRED: [term]}}}
    topo = _topology(
        [
            b.pod("guard", group=None, node="a2", labels={"app": "g"}, scheduler="default-scheduler", spec=guard),
            b.pod("web", labels={"app": "web"}, spec=SPREAD),
            b.pod("web2", labels={"app": "web"}),
        ]
    )
    tasks = topo.snapshot.tasks
    topo.count(_selector("web"))
    assert topo.held(tasks["ns/web2"]) is topo.held(tasks["ns/web"])
    assert topo.held(tasks["ns/web"])[topology.REQUIRED_ANTI]
    topo.add(0, tasks["ns/web"])
    topo.add(1, tasks["ns/web2"])
    assert topo.count(_selector("web")).rows.tolist() == [1, 1, 0]
    topo.drop(1, tasks["ns/web2"])
    assert topo.count(_selector("web")).rows.tolist() == [1, 0, 0]


def test_add_many_counts_as_adding_one_by_one() -> None:
    pods = [b.pod(f"p{i}", labels={"app": "w"}, spec=SPREAD) for i in range(4)]
    batch, single = _topology(pods), _topology(pods)
    count, alone = batch.count(_selector("w"), live=True), single.count(_selector("w"), live=True)
    batch.domain(count, ZONE), single.domain(alone, ZONE)
    tasks, rows = [batch.snapshot.tasks[f"ns/p{i}"] for i in range(4)], [1, 1, 2, 0]
    batch.add_many(rows, tasks)
    for task, row in zip(tasks, rows, strict=True):
        single.add(row, single.snapshot.tasks[task.key])
    assert count.rows.tolist() == alone.rows.tolist() == [1, 2, 1]
    assert batch.domain(count, ZONE).tolist() == single.domain(alone, ZONE).tolist() == [3, 0]
    batch.add_many(rows[1:], tasks[1:], -1)
    assert count.rows.tolist() == [0, 1, 0] and batch.domain(count, ZONE).tolist() == [1, 0]
    assert batch.count(_selector("w")).rows.tolist() == [0, 1, 0]  # asked for late: p0 is still placed


def test_present_domains_of_some_rows_and_of_every_row() -> None:
    topo = _topology([b.pod("p0", labels={"app": "w"}, spec=SPREAD)])
    assert topo.present(ZONE, np.array([True, True, True])).tolist() == [True, True]  # x: the extra domain
    assert topo.present(ZONE, np.array([True, False, False])).tolist() == [True, False]
    assert topo.present(ZONE, np.array([False, False, False])).tolist() == [False, False]
    assert topo.present(ZONE, np.array([True, True, False])).tolist() == [True, False]  # from the row left out
    assert topo.present(ZONE, np.array([True, False, True])).tolist() == [True, True]


def test_present_domains_as_looking_at_every_row() -> None:
    rng = np.random.default_rng(5)
    zones = ["a", "b", "c", None, "a", "c", "c", None, "b"]
    nodes = [b.node(f"n{i}", labels={ZONE: z} if z else {}) for i, z in enumerate(zones)]
    pods = [b.pod("p0", labels={"app": "w"}, spec=SPREAD)]
    topo = topology.Topology(building.build(nodes=nodes, pods=pods, podgroups=[b.podgroup("pg")], queues=[b.queue()]))
    ids, size = topo.ids(ZONE)
    for _ in range(200):
        rows = rng.random(len(zones)) < rng.choice([0.2, 0.5, 0.9, 1.0])
        expected = [bool(rows[ids == d].any()) for d in range(size + 1)]
        assert topo.present(ZONE, rows).tolist() == expected


def test_tasks_under_no_indexed_label_match_only_unindexed_terms() -> None:
    exists = {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "topologyKey": ZONE}
    guard = {"affinity": {"podAntiAffinity": {podspec.REQUIRED: [exists]}}}
    topo = _topology(
        [
            b.pod("guard", group=None, node="a2", labels={"app": "g"}, scheduler="default-scheduler", spec=guard),
            b.pod("web", labels={"app": "web"}),
            b.pod("bare", labels={"tier": "x"}),
        ]
    )
    tasks = topo.snapshot.tasks
    ((found, holders),) = topo.held(tasks["ns/web"])[topology.REQUIRED_ANTI]  # an Exists term: not indexed
    assert found.topology_key == ZONE and holders.rows.tolist() == [0, 1, 0]
    assert not topo.held(tasks["ns/bare"])
    selector = podspec.PodSelector(podspec.Namespaces(frozenset({"ns"})), podspec.matches(exists["labelSelector"]))
    every = topo.count((selector,))
    topo.add(0, tasks["ns/web"])
    topo.add(2, tasks["ns/bare"])  # no app label: in no count
    assert every.rows.tolist() == [1, 1, 0]


def test_a_count_asked_for_late_nets_out_rolled_back_placements() -> None:
    topo = _topology(
        [
            b.pod("p0", labels={"app": "w"}, spec=SPREAD),
            b.pod("p1", labels={"app": "v"}),
            b.pod("p2", labels={"app": "v"}),
        ]
    )
    tasks = topo.snapshot.tasks
    p1, p2 = tasks["ns/p1"], tasks["ns/p2"]
    topo.add_many([0, 0], [p1, p2])
    topo.add_many([0, 0], [p1, p2], -1)  # the statement discarded
    topo.add(2, p1)
    topo.add_many([1], [p2])
    assert topo.count(_selector("v")).rows.tolist() == [0, 1, 1]
    assert topo.count(_selector("w")).rows.tolist() == [0, 0, 0]


def test_a_key_of_one_domain_per_row_reads_the_rows_themselves() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "w"}}, "topologyKey": HOST}
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    topo = _topology([b.pod("p0", labels={"app": "w"}, spec=anti), b.pod("p1", labels={"app": "w"})])
    assert topo.identity(HOST)
    count = topo.count(_selector("w"))
    sums = topo.domain(count, HOST)
    assert sums.tolist() == [0, 0, 0, 0]  # a row each, then the one for rows without the label
    topo.add(1, topo.snapshot.tasks["ns/p1"])
    assert sums.tolist() == [0, 1, 0, 0] and topo.domain(count, HOST) is sums  # kept current, not copied
    assert HOST not in count.domains  # nothing else to update on a change
