"""`vbridge job` and `vbridge queue` (vcctl's verbs) against the real apiserver and our Job controller."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from tests.support import apiserver, bridgethread
from vbridge import cli
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration
ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(list(argv)) == 0
    return capsys.readouterr().out


def fail(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one error line of a command that failed at run time (exit 1, nothing on stdout)."""
    assert cli.main(list(argv)) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err.removeprefix("vbridge: error: ").rstrip("\n")


def test_queue_verbs(
    control_plane: cluster.LocalCluster, api_client: k8s.ApiClient, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = f"--kubeconfig={control_plane.kubeconfig}"
    assert run(capsys, "queue", "create", "cli-queue", "--weight", "4", kc) == "queue cli-queue created\n"
    listing = run(capsys, "queue", "list", kc).splitlines()
    assert listing[0].split() == ["NAME", "WEIGHT", "STATE", "PENDING", "INQUEUE", "RUNNING"]
    assert ["cli-queue", "4", "Open", "0", "0", "0"] in [row.split() for row in listing]
    assert run(capsys, "queue", "close", "cli-queue", kc) == "queue cli-queue is Closed\n"
    queue = k8s.CustomObjectsApi(api_client).get_cluster_custom_object(*apiserver.PG, "queues", "cli-queue")
    assert queue["status"]["state"] == "Closed"
    assert run(capsys, "queue", "open", "cli-queue", kc) == "queue cli-queue is Open\n"
    # Errors say what to do, in one line; never the apiserver's raw "409 AlreadyExists: ...".
    assert fail(capsys, "queue", "create", "cli-queue", kc) == (
        "queue cli-queue already exists; see it with: vbridge queue list"
    )
    assert fail(capsys, "queue", "close", "ghost-queue", kc) == (
        "queue ghost-queue not found; list them with: vbridge queue list"
    )
    names = run(capsys, "queue", "list", "-o", "name", kc).splitlines()
    assert names.count("queue.scheduling.volcano.sh/cli-queue") == 1


def test_job_verbs(
    control_plane: cluster.LocalCluster,
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    namespace: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kc = f"--kubeconfig={control_plane.kubeconfig}"
    job: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "volcano-job-mpi.yaml").read_text())
    job["metadata"].pop("namespace", None)
    crd = k8s.CustomObjectsApi(api_client)
    crd.create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", namespace, "jobs", job)
    name = job["metadata"]["name"]
    rows = [r.split() for r in run(capsys, "job", "list", "-n", namespace, kc).splitlines()]
    assert rows[0][:3] == ["NAME", "PHASE", "QUEUE"] and rows[1][0] == name  # one namespace: no NAMESPACE column
    rows = [r.split() for r in run(capsys, "job", "list", "-A", kc).splitlines()]
    assert rows[0][:2] == ["NAMESPACE", "NAME"] and [namespace, name] in [r[:2] for r in rows]
    assert run(capsys, "job", "list", "-n", namespace, "-o", "name", kc) == f"job.batch.volcano.sh/{name}\n"
    assert cli.main(["job", "list", "-n", namespace, "-l", "absent=label", kc]) == 0
    assert capsys.readouterr() == ("", f"No resources found in {namespace} namespace.\n")
    viewed = yaml.safe_load(run(capsys, "job", "view", name, "-n", namespace, "-o", "yaml", kc))
    assert (viewed["kind"], viewed["metadata"]["name"]) == ("Job", name)
    assert fail(capsys, "job", "view", "ghost", "-n", namespace, kc) == (
        f"job {namespace}/ghost not found; list them with: vbridge job list -n {namespace}"
    )
    view = run(capsys, "job", "view", name, "-n", namespace, kc)
    assert "mpimaster" in view and "mpiworker" in view
    assert run(capsys, "job", "suspend", name, "-n", namespace, kc) == f"job {namespace}/{name}: AbortJob requested\n"

    def aborted() -> bool:
        current = crd.get_namespaced_custom_object("batch.volcano.sh", "v1alpha1", namespace, "jobs", name)
        phase = ((current.get("status") or {}).get("state") or {}).get("phase")
        consumed = "vbridge.io/job-command" not in (current["metadata"].get("annotations") or {})
        return consumed and phase in ("Aborting", "Aborted")

    apiserver.eventually(aborted, timeout=30, what="the controller to carry out AbortJob")
    assert run(capsys, "job", "delete", name, "-n", namespace, kc) == f"job {namespace}/{name} deleted\n"
