"""``vbridge explain`` against the real apiserver and the shared simulated nodes.

Two gangs whatever other tests run on ``sim-node-0..3`` (8 cpu each): ``gang`` can never run
here (five 5-cpu pods plus one pod whose nodeSelector matches no node, minMember 6), ``wait``
waits for resources (five 5-cpu pods, at most one per node, minMember 5). Their pods use a
scheduler name nobody serves, so they stay Pending while we look.
"""

from __future__ import annotations

import asyncio
import json
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


def _pod(name: str, scheduler: str, cpu: str, selector: dict[str, str] | None = None, group: str = "gang") -> k8s.V1Pod:
    return k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name=name, annotations={"scheduling.k8s.io/group-name": group}),
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


def _group(api_client: k8s.ApiClient, namespace: str, name: str, min_member: int) -> None:
    k8s.CustomObjectsApi(api_client).create_namespaced_custom_object(
        *apiserver.PG,
        namespace,
        "podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name},
            "spec": {"minMember": min_member, "queue": "default"},
            "status": {"phase": "Inqueue"},
        },
    )


def test_explain_never_and_waiting_gangs(
    control_plane: cluster.LocalCluster,
    sim_nodes: simthread.SimThread,
    api_client: k8s.ApiClient,
    namespace: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scheduler = f"explain-{uuid.uuid4().hex[:6]}"
    _group(api_client, namespace, "gang", 6)
    _group(api_client, namespace, "wait", 5)
    core = k8s.CoreV1Api(api_client)
    for i in range(5):
        core.create_namespaced_pod(namespace, _pod(f"w{i}", scheduler, "5"))
        core.create_namespaced_pod(namespace, _pod(f"q{i}", scheduler, "5", group="wait"))
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
    by_request = {shape.request.cpu: shape for shape in exp.shapes}
    assert by_request[5000].tasks == 5
    assert dict(by_request[1000].failures)[SELECTOR] == len(snap.nodes)
    assert by_request[1000].feasible_nodes == 0
    assert by_request[1000].never == "task pinned: no node matches nodeSelector vbridge.io/test=nowhere"
    # Never admitted: the Inqueue group goes back to Pending and says why.
    assert (exp.state, exp.next_phase) == ("never", "Pending")
    assert exp.condition is not None and exp.condition.reason == "NeverFits"
    assert exp.queue.name == "default" and exp.queue.exists

    waiting = explain.explain(snap, conf, f"{namespace}/wait")
    assert waiting.state == "waiting" and waiting.next_phase == "Inqueue"
    assert waiting.fit <= 4  # at most one 5-cpu pod per 8-cpu node
    assert {node for node, _ in waiting.fit_nodes} <= sims and all(n == 1 for _, n in waiting.fit_nodes)
    assert "waits for resources: only" in waiting.verdict

    # The command prints the same, from its own listing: the old form, KIND/NAME with -n, JSON.
    kubeconfig = ["--kubeconfig", str(control_plane.kubeconfig), "--scheduler-name", scheduler]
    assert cli.main(["explain", "podgroup", f"{namespace}/gang", *kubeconfig]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"PodGroup {namespace}/gang: phase Inqueue, minMember 6, 6 pod(s): 0 ready, 6 pending")
    assert "verdict: can never run here: task pinned: no node matches nodeSelector vbridge.io/test=nowhere" in out
    assert "must free up" not in out
    assert cli.main(["explain", "pg/wait", "-n", namespace, *kubeconfig]) == 0
    out = capsys.readouterr().out
    assert "waits for resources" in out and "best partial fit" in out and "5 pod(s) requesting cpu 5, memory 1Gi" in out
    assert cli.main(["explain", "--all-pending", "-n", namespace, "-o", "json", *kubeconfig]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert {d["podgroup"]: d["state"] for d in docs} == {f"{namespace}/gang": "never", f"{namespace}/wait": "waiting"}


def test_explain_unknown_podgroup_is_one_line(
    control_plane: cluster.LocalCluster, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["explain", "podgroup", f"{namespace}/ghost", "--kubeconfig", str(control_plane.kubeconfig)])
    assert code == 1  # a runtime error (2 is for a command line that cannot be read)
    assert f"podgroup {namespace}/ghost not found" in capsys.readouterr().err


def test_explain_unknown_workload_as_json(
    control_plane: cluster.LocalCluster, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["explain", "tfjob/ghost", "-n", namespace, "-o", "json", "--kubeconfig", str(control_plane.kubeconfig)]
    assert cli.main(argv) == 1
    assert json.loads(capsys.readouterr().out) == {"error": f"no PodGroup for tfjob {namespace}/ghost not found"}
