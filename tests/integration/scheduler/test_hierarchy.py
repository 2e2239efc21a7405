"""Hierarchical queues against a real kube-apiserver, in the shape of Volcano's ``example/hierarchical-jobs``.

Its four queues, with their ``volcano.sh/hierarchy`` annotations unchanged, one job in each leaf
(minAvailable 1, pods of 0.5 cpu), more demand than the cluster holds: the shares the scheduler
hands out must be the weights' (eng 2 : sci 8, then prod 8 : dev 2 in each), printed as a table.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, schedbed, schedthread
from vbridge.commands import queuetree as queue_table

pytestmark = pytest.mark.integration
Nodes = Callable[..., list[str]]
Run = Callable[..., schedthread.SchedThread]

CAPACITY_CONF = (
    'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n'
    "- plugins: [{name: overcommit}, {name: predicates}, {name: capacity, enableHierarchy: true}, {name: nodeorder}]\n"
)
# example/hierarchical-jobs/queues.yaml: leaf → (hierarchy, weights)
EXAMPLE = {
    "root-eng-prod": ("root/eng/prod", "1/2/8"),
    "root-eng-dev": ("root/eng/dev", "1/2/2"),
    "root-sci-prod": ("root/sci/prod", "1/8/8"),
    "root-sci-dev": ("root/sci/dev", "1/8/2"),
}
PODS = 25  # the cluster holds 25 pods of 0.5 cpu; each job asks for 20


def entitled(leaf: str) -> float:
    """The leaf's share of ``PODS`` by the weights: each level's weight over its siblings'."""
    path, weights = EXAMPLE[leaf]
    team, own = path.split("/")[1], float(weights.split("/")[2])
    tops = {p.split("/")[1]: float(w.split("/")[1]) for p, w in EXAMPLE.values()}
    siblings = [float(w.split("/")[2]) for p, w in EXAMPLE.values() if p.split("/")[1] == team]
    return PODS * tops[team] / sum(tops.values()) * own / sum(siblings)


def test_hierarchy_weights_give_each_level_its_share_under_contention(
    api: k8s.ApiClient, ns: str, scheduler_name: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(5, cpu="2500m", memory="64Gi")
    custom = k8s.CustomObjectsApi(api)
    names = {leaf: f"{leaf}-{ns}" for leaf in EXAMPLE}
    for leaf, (path, weights) in EXAMPLE.items():
        annotations = {"volcano.sh/hierarchy": path, "volcano.sh/hierarchy-weights": weights}
        body = {
            "apiVersion": "/".join(apiserver.PG),
            "kind": "Queue",
            "metadata": {"name": names[leaf], "annotations": annotations},
            "spec": {"weight": 1},
        }
        custom.create_cluster_custom_object(*apiserver.PG, "queues", body)
    try:
        for leaf, queue in names.items():
            schedbed.podgroup(api, ns, leaf, 1, queue=queue)
            schedbed.pods(api, ns, leaf, 20, scheduler=scheduler_name, cpu="500m")
        run_scheduler(CAPACITY_CONF)  # only now: the first cycle sees every leaf's demand

        def shares() -> dict[str, int] | None:
            placed = [n for n, p in schedbed.placement(api, ns).items() if p.spec.node_name]
            got = {leaf: sum(n.startswith(f"{leaf}-") for n in placed) for leaf in EXAMPLE}
            return got if sum(got.values()) == PODS else None

        got = apiserver.eventually(shares, 60, f"all {PODS} pods' room handed out")
        print(f"\n{'queue':<16}{'path':<16}{'weights':<10}{'entitled':>9}{'bound':>7}")
        for leaf, (path, weights) in EXAMPLE.items():
            print(f"{leaf:<16}{path:<16}{weights:<10}{entitled(leaf):>9.2f}{got[leaf]:>7}")
        assert got == {leaf: round(entitled(leaf)) for leaf in EXAMPLE}
        live = custom.list_cluster_custom_object(*apiserver.PG, "queues")["items"]
        mine = [q for q in live if q["metadata"]["name"] in names.values()]
        nodes = api.sanitize_for_serialization(k8s.CoreV1Api(api).list_node().items)
        print(queue_table.render(mine, nodes))
    finally:
        for queue in names.values():
            custom.delete_cluster_custom_object(*apiserver.PG, "queues", queue)
