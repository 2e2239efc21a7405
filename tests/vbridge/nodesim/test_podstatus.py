from __future__ import annotations

from typing import Any

from vbridge.nodesim import EXIT_CODE, RUN_SECONDS, nodes, podstatus

POD: dict[str, Any] = {
    "metadata": {"name": "p", "annotations": {RUN_SECONDS: "2.5", EXIT_CODE: "7"}},
    "spec": {"containers": [{"name": "a", "image": "img"}], "initContainers": [{"name": "init", "image": "i"}]},
    "status": {"startTime": "2026-01-01T00:00:00Z"},
}


def test_annotations_drive_run_time_and_exit_code() -> None:
    assert podstatus.run_seconds(POD, None) == 2.5
    assert podstatus.exit_code(POD) == 7
    bare: dict[str, Any] = {"metadata": {}}
    assert podstatus.run_seconds(bare, None) is None and podstatus.run_seconds(bare, 9.0) == 9.0
    assert podstatus.exit_code(bare) == 0
    junk = {"metadata": {"annotations": {RUN_SECONDS: "soon", EXIT_CODE: "x"}}}
    assert podstatus.run_seconds(junk, 1.0) == 1.0 and podstatus.exit_code(junk) == 1


def test_running_then_finished_bodies() -> None:
    run = podstatus.running(POD, pod_ip="10.128.0.5", host_ip="172.30.0.2", now="T")["status"]
    assert run["phase"] == "Running" and run["podIP"] == "10.128.0.5" and run["hostIP"] == "172.30.0.2"
    assert run["containerStatuses"][0]["state"] == {"running": {"startedAt": "T"}}
    assert run["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    assert {c["type"]: c["status"] for c in run["conditions"]}["Ready"] == "True"
    done = podstatus.finished(POD, code=7, now="U")["status"]
    assert done["phase"] == "Failed"
    term = done["containerStatuses"][0]["state"]["terminated"]
    assert term == {"exitCode": 7, "reason": "Error", "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "U"}
    assert podstatus.finished(POD, code=0, now="U")["status"]["phase"] == "Succeeded"


def test_node_bodies_carry_capacity_labels_and_taints() -> None:
    spec = nodes.NodeSpec(
        name="n1",
        cpu="4",
        memory="8Gi",
        pods=20,
        gpus=1,
        labels=(("zone", "a"),),
        taints=(("dedicated", "gpu", "NoSchedule"),),
        unschedulable=True,
    )
    body = nodes.node_body(spec)
    assert body["metadata"]["labels"]["zone"] == "a" and body["metadata"]["labels"]["kubernetes.io/hostname"] == "n1"
    assert body["spec"] == {
        "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        "unschedulable": True,
    }
    status = nodes.node_status(spec, address="172.30.0.2", now="T")["status"]
    assert status["allocatable"] == {
        "cpu": "4",
        "memory": "8Gi",
        "pods": "20",
        "ephemeral-storage": "1Ti",
        "nvidia.com/gpu": "1",
    }
    assert [c["type"] for c in status["conditions"] if c["status"] == "True"] == ["Ready"]
    assert [n.name for n in nodes.pool(3, prefix="x")] == ["x-0", "x-1", "x-2"]
