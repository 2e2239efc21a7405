"""Simulated nodes plus our scheduler on an operator's control plane, and the check that gangs bound whole."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING

from kubernetes import client as k8s

from tests.support import apiserver, gangcheck, loopthread, simthread
from vbridge.localcluster import cluster

if TYPE_CHECKING:
    from tests.support import schedthread

ROOT = pathlib.Path(__file__).resolve().parents[2]


def scheduler_available() -> bool:
    """Whether our scheduler (scheduler/io) is in this checkout; the operator tests then bind pods."""
    return (ROOT / "scheduler" / "io" / "loop.py").exists()


class Gang:
    """Simulated nodes plus our scheduler (named volcano, as the stamps ask) on ``lc``, when we have it.

    Pods finish ``run_seconds`` after they start, so operators see their jobs through to the end.
    ``log`` records the cycle in which each pod was bound and its PodGroup, ``sched.cycles`` every
    cycle; while running, the gang is registered in ``GANGS`` under ``api``, where
    ``eventually_bound`` finds it.
    """

    def __init__(self, lc: cluster.LocalCluster, api: k8s.ApiClient, *, run_seconds: float = 5.0) -> None:
        self.threads: list[loopthread.LoopThread] = []
        self.api = api
        self.log = gangcheck.BindLog()
        self.sched: schedthread.SchedThread | None = None
        if not scheduler_available():
            return
        from scheduler import configure
        from tests.support import schedthread
        from vbridge.nodesim import nodes

        specs = nodes.pool(4, prefix="op-node", cpu="8", memory="32Gi")
        self.threads.append(simthread.SimThread(lc.kubeconfig, specs, default_run_seconds=run_seconds).start())
        for spec in specs:
            # Without the node lifecycle controller nobody lifts the not-ready taint new nodes get.
            k8s.CoreV1Api(api).patch_node(spec.name, {"spec": {"taints": None}})
        self.sched = schedthread.SchedThread(lc, configure.default(), on_cycle=self.log.record)
        self.threads.append(self.sched.start())
        GANGS[api] = self

    @property
    def on(self) -> bool:
        return bool(self.threads)

    def stop(self) -> None:
        if GANGS.get(self.api) is self:
            del GANGS[self.api]
        for thread in reversed(self.threads):
            thread.stop()
        self.threads.clear()


# The running Gangs, by the api client their tests read the cluster with.
GANGS: dict[k8s.ApiClient, Gang] = {}


def eventually_bound(api: k8s.ApiClient, ns: str, selector: str, count: int) -> None:
    """All ``count`` pods bound to a node (pods the operator already cleaned up do not count), and
    each of their PodGroups bound as one gang: its first minMember binds in one scheduler cycle.

    The binds are those the ``Gang`` running against ``api`` recorded (see ``GANGS``).
    """
    gang = GANGS.get(api)
    assert gang is not None, (
        "eventually_bound needs a Gang running against this api client (Gang(lc, api)): "
        "it records the cycle in which each pod was bound"
    )
    seen: list[str] = []

    def bound() -> tuple[dict[str, gangcheck.Bind], dict[str, int]] | None:
        found = {f"{ns}/{p['metadata']['name']}": p for p in apiserver.pods(api, ns, selector)}
        binds = gang.log.binds()
        seen[:] = [f"{k}: node {p['spec'].get('nodeName')}, {binds.get(k)}" for k, p in found.items()]
        # The scheduler reports a cycle after its binds landed: wait for the record, not only the node.
        if len(found) != count or not all(p["spec"].get("nodeName") and k in binds for k, p in found.items()):
            return None
        annotations = [p["metadata"].get("annotations") or {} for p in found.values()]
        groups = {f"{ns}/{a[apiserver.GROUP_NAME]}" for a in annotations if apiserver.GROUP_NAME in a}
        live = {f"{ns}/{pg['metadata']['name']}": pg for pg in apiserver.podgroups(api, ns)}
        assert groups <= set(live), f"PodGroups {sorted(groups - set(live))} are gone before minMember was read"
        return binds, {g: int(live[g]["spec"].get("minMember", 1)) for g in groups}

    try:
        binds, min_members = apiserver.eventually(bound, timeout=60, what=f"{count} pods ({selector}) to be bound")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last seen:\n  " + "\n  ".join(seen)) from None
    problems = gangcheck.split_gangs(binds, min_members)
    assert not problems, "\n".join([*problems, *(f"failed bind: {f}" for f in gang.log.failed())])
