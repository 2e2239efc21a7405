"""``vbridge doctor`` against the real apiserver with the bridge registered (by URL, no scheduler).

The release namespace is the test's own fresh namespace, so the Lease, the scheduler conf and the
Deployments the checks look for are exactly the ones each test makes there.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.support import bridgethread
from vbridge import cli
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration


def doctor(lc: cluster.LocalCluster, namespace: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    argv = ["doctor", f"--kubeconfig={lc.kubeconfig}", f"--namespace={namespace}", f"--probe-namespace={namespace}"]
    rc = cli.main([*argv, "-o", "json"])
    report = json.loads(capsys.readouterr().out)
    return rc, {c["name"]: c for c in report["checks"]}


def test_webhook_ok_and_missing_scheduler_leader_fails(
    control_plane: cluster.LocalCluster,
    bridge: bridgethread.BridgeThread,
    namespace: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, checks = doctor(control_plane, namespace, capsys)
    assert rc == 1
    assert checks["apiserver"]["verdict"] == "OK" and "Kubernetes v1." in checks["apiserver"]["message"]
    assert checks["crds"]["verdict"] == "OK" and "ours" in checks["crds"]["message"]
    assert checks["volcano"]["verdict"] == "OK"
    assert checks["webhook"]["verdict"] == "OK"
    assert f"registered by URL {bridge.url}" in checks["webhook"]["message"]
    assert checks["webhook-dry-run"]["verdict"] == "OK", checks["webhook-dry-run"]
    assert checks["scheduler-leader"]["verdict"] == "FAIL"
    assert f"no Lease {namespace}/volcano-scheduler" in checks["scheduler-leader"]["message"]
    assert checks["components"]["verdict"] == "WARN"
    # the text form: one line per check and a tally
    assert cli.main(["doctor", f"--kubeconfig={control_plane.kubeconfig}", f"--namespace={namespace}"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("FAIL  scheduler-leader") and "-> kubectl" in line for line in lines)
    assert lines[-1].endswith("1 FAIL")


def test_fresh_lease_unsupported_plugins_volcano_and_operator_flags(
    control_plane: cluster.LocalCluster,
    bridge: bridgethread.BridgeThread,
    namespace: str,
    api_client: k8s.ApiClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    now = datetime.datetime.now(datetime.UTC)
    k8s.CoordinationV1Api(api_client).create_namespaced_lease(
        namespace,
        k8s.V1Lease(
            metadata=k8s.V1ObjectMeta(name="volcano-scheduler"),
            spec=k8s.V1LeaseSpec(holder_identity="sched-0_1", lease_duration_seconds=15, renew_time=now),
        ),
    )
    conf = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: drf\n  - name: sla\n'
    k8s.CoreV1Api(api_client).create_namespaced_config_map(
        namespace,
        k8s.V1ConfigMap(
            metadata=k8s.V1ObjectMeta(name="volcano-bridge-scheduler-conf"), data={"volcano-scheduler.conf": conf}
        ),
    )
    apps = k8s.AppsV1Api(api_client)
    for name, labels, args in [
        ("vc-scheduler", {"app": "volcano-scheduler"}, ["--scheduler-name=volcano", "--scheduler-name=batch"]),
        ("training-operator", {"app": "training-operator"}, ["--gang-scheduler-name=volcano"]),
    ]:
        apps.create_namespaced_deployment(namespace, _deployment(name, labels, args))

    rc, checks = doctor(control_plane, namespace, capsys)
    assert checks["scheduler-leader"]["verdict"] == "OK"
    assert "held by sched-0_1" in checks["scheduler-leader"]["message"]
    assert checks["scheduler-conf"]["verdict"] == "OK", "Volcano's scheduler places the groups: its conf applies"
    volcano = checks["volcano"]
    assert volcano["verdict"] == "WARN" and f"scheduler {namespace}/vc-scheduler" in volcano["message"]
    assert "(schedulerName volcano, batch)" in volcano["message"] and "volcano.external=true" in volcano["fix"]
    operators = checks["operators"]
    assert operators["verdict"] == "WARN"
    assert f"{namespace}/training-operator (--gang-scheduler-name=volcano)" in operators["message"]
    assert rc == 0, [c for c in checks.values() if c["verdict"] == "FAIL"]

    apps.delete_namespaced_deployment("vc-scheduler", namespace)
    _, checks = doctor(control_plane, namespace, capsys)
    assert checks["scheduler-conf"]["verdict"] == "FAIL"
    assert "Volcano plugin(s) sla not implemented" in checks["scheduler-conf"]["message"]


def _deployment(name: str, labels: dict[str, str], args: list[str]) -> k8s.V1Deployment:
    return k8s.V1Deployment(
        metadata=k8s.V1ObjectMeta(name=name, labels=labels),
        spec=k8s.V1DeploymentSpec(
            replicas=0,  # only its spec is read: no pods
            selector=k8s.V1LabelSelector(match_labels=labels),
            template=k8s.V1PodTemplateSpec(
                metadata=k8s.V1ObjectMeta(labels=labels),
                spec=k8s.V1PodSpec(containers=[k8s.V1Container(name=name, image="busybox", args=args)]),
            ),
        ),
    )
