"""Pod placement rules against a real kube-apiserver with simulated nodes in two zones: a gang
with a zone spread constraint and one with required zone anti-affinity land as their rules say."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, schedbed, schedthread

pytestmark = pytest.mark.integration
Nodes = Callable[..., list[str]]
Run = Callable[..., schedthread.SchedThread]
ZONE = "topology.kubernetes.io/zone"


def _selector(app: str) -> dict[str, Any]:
    return {"matchLabels": {"app": app}}


def test_zone_spread_and_zone_anti_affinity_place_gangs_as_required(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    zone_of = {name: "a" for name in make_nodes(3, cpu="4", memory="16Gi", labels=((ZONE, "a"),))}
    zone_of |= {name: "b" for name in make_nodes(1, cpu="4", memory="16Gi", labels=((ZONE, "b"),))}
    sched = run_scheduler()
    name = sched.scheduler_name
    # Four pods, at most one apart per zone: two in each, though zone a has three nodes to b's one.
    spread = {
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": _selector("s")}
        ]
    }
    schedbed.podgroup(api, ns, "spread", 4)
    schedbed.pods(api, ns, "spread", 4, scheduler=name, labels={"app": "s"}, spec=spread)
    # Three pods that may not share a zone, of which two make the gang: one per zone, the third waits.
    term = {"labelSelector": _selector("x"), "topologyKey": ZONE}
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    schedbed.podgroup(api, ns, "anti", 2)
    schedbed.pods(api, ns, "anti", 3, scheduler=name, labels={"app": "x"}, spec=anti)

    def zones(prefix: str, count: int) -> Counter[str] | None:
        placed = [p.spec.node_name for n, p in schedbed.placement(api, ns).items() if n.startswith(prefix + "-")]
        bound = [zone_of[node] for node in placed if node]
        return Counter(bound) if len(bound) == count else None

    assert apiserver.eventually(lambda: zones("spread", 4), 30, "the spread gang bound") == {"a": 2, "b": 2}
    assert apiserver.eventually(lambda: zones("anti", 2), 30, "two of the anti gang bound") == {"a": 1, "b": 1}
    waiting = next(n for n, p in schedbed.placement(api, ns).items() if n.startswith("anti-") and not p.spec.node_name)

    def told() -> bool:
        return any(
            e.involved_object.name == waiting and "didn't match pod anti-affinity rules" in (e.message or "")
            for e in schedbed.events(api, ns)
        )

    apiserver.eventually(told, 20, f"{waiting} told it has no zone left")
    later = sched.cycles.next(2)  # and it stays so: nothing more is bound
    assert not [pod for r in later for pod in r.outcome.bound]
    assert zones("spread", 4) == {"a": 2, "b": 2} and zones("anti", 2) == {"a": 1, "b": 1}
