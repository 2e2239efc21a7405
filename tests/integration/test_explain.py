"""``vbridge explain podgroup`` against the real apiserver and the shared simulated nodes.

The gang can never fit (five 5-cpu pods on 8-cpu nodes, at most one per node, plus one pod
whose nodeSelector matches no node), whatever other tests run on ``sim-node-0..3``. Its pods
use a scheduler name nobody serves, so they stay Pending while we look.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from kubernetes import client as k8s

from bridge.k8s import client, kubeconfigs
from scheduler import configure
from scheduler.api import building
from scheduler.tools import explain
from tests.support import apiserver, simthread
from vbridge import cli
from vbridge.commands import explain as explain_command
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration

SELECTOR = "node(s) didn't match Pod's node affinity/selector"


def _pod(name: str, scheduler: str, cpu: str, selector: dict[str, str] | None = None) -> k8s.V1Pod:
    return k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name=name, annotations={"scheduling.k8s.io/group-name": "gang"}),
        spec=k8s.V1PodSpec(
            scheduler_name=scheduler,
            node_selector=selector,
            containers=[
                k8s.V1Container(
                    name="main",
                    image="busybox",
                    resources=k8s.V1ResourceRequirements(requests={"cpu": cpu, "memory": "1Gi"}),
                )
            ],
        ),
    )


def test_explain_waiting_gang(
    control_plane: cluster.LocalCluster,
    sim_nodes: simthread.SimThread,
    api_client: k8s.ApiClient,
    namespace: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scheduler = f"explain-{uuid.uuid4().hex[:6]}"
    k8s.CustomObjectsApi(api_client).create_namespaced_custom_object(
        *apiserver.PG,
        namespace,
        "podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "gang"},
            "spec": {"minMember": 6, "queue": "default"},
            "status": {"phase": "Inqueue"},
        },
    )
    core = k8s.CoreV1Api(api_client)
    for i in range(5):
        core.create_namespaced_pod(namespace, _pod(f"w{i}", scheduler, "5"))
    core.create_namespaced_pod(namespace, _pod("pinned", scheduler, "1", {"vbridge.io/test": "nowhere"}))

    async def listed() -> dict[str, list[dict[str, object]]]:
        async with client.Client(kubeconfigs.load(control_plane.kubeconfig)) as api:
            return await explain_command.fetch(api)

    conf = configure.parse("", scheduler_name=scheduler)
    snap = building.build(**asyncio.run(listed()), scheduler_name=scheduler)
    exp = explain.explain(snap, conf, f"{namespace}/gang")
    assert (exp.tasks, exp.pending, exp.ready, exp.needed) == (6, 6, 0, 6)
    sims = {f"sim-node-{i}" for i in range(4)}
    assert {node.name for node in snap.nodes} >= sims
    assert exp.fit <= 4  # at most one 5-cpu pod per 8-cpu node; the pinned pod fits nowhere
    assert {node for node, _ in exp.fit_nodes} <= sims and all(n == 1 for _, n in exp.fit_nodes)
    by_request = {shape.request.cpu: shape for shape in exp.shapes}
    assert by_request[5000].tasks == 5
    assert dict(by_request[1000].failures)[SELECTOR] == len(snap.nodes)
    assert by_request[1000].feasible_nodes == 0
    assert exp.queue.name == "default" and exp.queue.exists
    assert "the gang waits" in exp.verdict

    # The command prints the same report, from its own listing.
    code = cli.main(
        [
            "explain",
            "podgroup",
            f"{namespace}/gang",
            "--kubeconfig",
            str(control_plane.kubeconfig),
            "--scheduler-name",
            scheduler,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith(f"PodGroup {namespace}/gang: phase Inqueue, minMember 6, 6 task(s): 0 ready, 6 pending")
    assert f"{len(snap.nodes)} {SELECTOR}" in out
    assert "the gang waits, all or nothing" in out


def test_explain_unknown_podgroup_is_one_line(
    control_plane: cluster.LocalCluster, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["explain", "podgroup", f"{namespace}/ghost", "--kubeconfig", str(control_plane.kubeconfig)])
    assert code != 0
    assert f"podgroup {namespace}/ghost not found" in capsys.readouterr().err
