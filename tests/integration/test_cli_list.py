"""`vbridge list` (and -w), the Events behind it, and `up`'s seeding, on the real apiserver with our reconcilers."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import signal
import subprocess
import sys
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge.k8s import client, kubeconfigs
from tests.builders import kubeflow
from tests.support import apiserver, bridgethread, upstream
from vbridge import cli, embedded
from vbridge.localcluster import binaries, cluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def tfjob_crd(control_plane: cluster.LocalCluster) -> None:
    upstream.install(control_plane, "training-operator")


def _tfjob(api_client: k8s.ApiClient, namespace: str, name: str, **labels: str) -> dict[str, Any]:
    worker = kubeflow.replica(2, kubeflow.container(cpu="2", memory="4Gi"))
    job = kubeflow.tfjob(name, Worker=worker)
    job["metadata"] = {"name": name, "namespace": namespace, "labels": labels}
    created: dict[str, Any] = k8s.CustomObjectsApi(api_client).create_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs", job
    )
    return created


def _event(api_client: k8s.ApiClient, namespace: str, name: str, reason: str) -> str | None:
    events = k8s.CoreV1Api(api_client).list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}")
    return next((str(e.message) for e in events.items if e.reason == reason), None)


def test_list_shows_groups_and_jobs_and_events_read_as_people_write(
    control_plane: cluster.LocalCluster,
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    tfjob_crd: None,
    namespace: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kc = f"--kubeconfig={control_plane.kubeconfig}"
    _tfjob(api_client, namespace, "mnist", team="ml")
    message = apiserver.eventually(lambda: _event(api_client, namespace, "mnist", "PodGroupCreated"), 30, "the Event")
    # Not "minResources {'cpu': '4', 'memory': '8Gi'}": the quantities as a person writes them.
    assert message == (
        "PodGroup mnist: minMember 2, queue default, minTaskMember worker 2, minResources cpu 4, memory 8Gi"
    )
    assert cli.main(["list", "-n", namespace, kc]) == 0
    out, err = capsys.readouterr()
    assert [line.split() for line in out.splitlines()] == [
        ["NAME", "PHASE", "MINMEMBER", "RUNNING", "SUCCEEDED", "QUEUE"],
        ["mnist", "Pending", "2", "0", "0", "default"],
        [],
        ["NAME", "KIND", "STATE"],
        ["mnist", "TFJob", "-"],
    ]
    assert err.startswith("note: 1 TFJob(s) without status") and "training-operator" in err  # nobody runs it here
    assert cli.main(["list", "-n", namespace, "-l", "team=other", kc]) == 0
    assert capsys.readouterr() == ("", f"No resources found in {namespace} namespace.\n")
    assert cli.main(["list", "-n", namespace, "-o", "name", kc]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "podgroup.scheduling.volcano.sh/mnist",
        "tfjob.kubeflow.org/mnist",
    ]


def test_list_shows_mpi_operators_v2beta1_mpijobs(
    control_plane: cluster.LocalCluster,
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    namespace: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # mpi-operator's CRD serves MPIJob v2beta1 only: list asks for v1 too (training-operator's),
    # and that 404 is a version this cluster does not serve, not an error.
    upstream.install(control_plane, "mpi-operator")
    worker = kubeflow.replica(2, kubeflow.container(cpu="1", memory="1Gi"))
    job = kubeflow.mpijob("pi", Launcher=kubeflow.replica(1, kubeflow.container(cpu="1", memory="1Gi")), Worker=worker)
    job["metadata"] = {"name": "pi", "namespace": namespace}
    k8s.CustomObjectsApi(api_client).create_namespaced_custom_object(
        "kubeflow.org", "v2beta1", namespace, "mpijobs", job
    )
    kc = f"--kubeconfig={control_plane.kubeconfig}"
    assert cli.main(["list", "-n", namespace, "-o", "name", kc]) == 0
    out, err = capsys.readouterr()
    assert "mpijob.kubeflow.org/pi" in out.splitlines() and err == ""
    assert cli.main(["list", "-n", namespace, "-o", "json", kc]) == 0
    listed = [o for o in json.loads(capsys.readouterr().out)["items"] if o["kind"] == "MPIJob"]
    assert [(o["apiVersion"], o["metadata"]["name"]) for o in listed] == [("kubeflow.org/v2beta1", "pi")]
    assert cli.main(["list", "-n", namespace, kc]) == 0
    out, err = capsys.readouterr()
    assert ["pi", "MPIJob", "-"] in [line.split() for line in out.splitlines()]
    assert err.startswith("note: 1 MPIJob(s) without status") and "mpi-operator (v2beta1)" in err


def test_watch_prints_the_table_then_a_row_per_change(
    control_plane: cluster.LocalCluster,
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    tfjob_crd: None,
    namespace: str,
) -> None:
    argv = [sys.executable, "-m", "vbridge.cli", "list", "-n", namespace, "-w"]
    argv.append(f"--kubeconfig={control_plane.kubeconfig}")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stderr is not None and proc.stdout is not None
        try:
            # Nothing yet: kubectl's line, on stderr; then each new object is one row on stdout.
            assert proc.stderr.readline() == f"No resources found in {namespace} namespace.\n"
            _tfjob(api_client, namespace, "later")
            rows: list[list[str]] = []
            while ["later", "TFJob", "-"] not in rows or not any(r[:2] == ["later", "Pending"] for r in rows):
                line = proc.stdout.readline()
                assert line, f"vbridge list -w ended: {proc.stderr.read()}"
                rows.append(line.split())
        finally:
            proc.send_signal(signal.SIGINT)
            code = proc.wait(30)
    # The TFJob's row and its PodGroup's (made by the reconcilers), in the order they came; no header.
    assert all(r[0] == "later" for r in rows)
    assert code == 130


@pytest.mark.timeout(300)  # the upstream CRDs are applied twice (~30 s each on 2 busy cores)
def test_seeding_twice_keeps_what_exists(bins: binaries.Binaries, tmp_path: pathlib.Path) -> None:
    # On a control plane of its own: the seeds bring MPIJob v1's CRD, which the session's shared
    # control plane must not get (its other tests install mpi-operator's v2beta1 under that name).
    said: list[str] = []

    async def seed_twice(lc: cluster.LocalCluster) -> None:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
            await embedded.seed(api, said.append)
            first = len(said)
            await embedded.seed(api, said.append)  # a reused --workdir: no 409 crash
            assert len(said) == 2 * first

    with cluster.LocalCluster(tmp_path / "seeded", bins=bins) as lc:
        asyncio.run(seed_twice(lc))
    created = [line for line in said if line.startswith("  created ")]
    kept = [line for line in said if line.startswith("  kept ")]
    assert created and [line.replace("kept", "created", 1).split(" (")[0] for line in kept] == created
    assert all(line.endswith("(it exists from an earlier run)") for line in kept)
