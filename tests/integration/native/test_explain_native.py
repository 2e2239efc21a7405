"""``vbridge explain`` on the native backend (issue 31, 5g), on the real apiserver.

The native test bed (``tests.support.nativebed``: the Workload API served, our webhooks and
reconcilers on ``backend="native"``, kube-scheduler, our scheduler's queue half). A Volcano Job
whose gang kube-scheduler placed is explained without ``--backend`` (found: native, its pods on
``default-scheduler`` counted) and with it, alike. A PodGroup naming a PriorityClass that does
not exist: the apiserver refuses its native twin; the reconciler records that on the Volcano
PodGroup (condition and Event), and explain says so instead of "waits on kube-scheduler".
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import keys
from tests.builders import vcjob as builders_vcjob
from tests.support import apiserver, nativebed
from vbridge import cli
from vbridge.localcluster import binaries

pytestmark = pytest.mark.integration
NS = "native-explain"


@pytest.fixture(scope="module")
def bed(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[pathlib.Path, Any]]:
    workdir = tmp_path_factory.mktemp("native-explain")
    with nativebed.started(bins, workdir, namespace=NS, prefix="xn", backend="native") as (lc, client):
        yield lc.kubeconfig, client


def _explain(kubeconfig: pathlib.Path, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert cli.main(["explain", *argv, "-n", NS, "-o", "json", "--kubeconfig", str(kubeconfig)]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_explain_finds_the_native_backend_and_the_pods_of_kube_scheduler(
    bed: tuple[pathlib.Path, k8s.ApiClient], capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig, api = bed
    job = builders_vcjob.simple("placed", 2, run_seconds=3600, cpu="1")
    k8s.CustomObjectsApi(api).create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", NS, "jobs", job)

    def running() -> list[Any] | None:
        pods = k8s.CoreV1Api(api).list_namespaced_pod(NS, label_selector="volcano.sh/job-name=placed").items
        return pods if len(pods) == 2 and all(p.spec.node_name for p in pods) else None

    pods = apiserver.eventually(running, 60, "the gang bound by kube-scheduler")
    assert {p.spec.scheduler_name for p in pods} == {"default-scheduler"}
    found = _explain(kubeconfig, capsys, "vcjob/placed")  # no --backend: found from the cluster
    assert found["podgroup"].startswith(f"{NS}/placed-")
    assert (found["pods"]["exist"], found["pods"]["min_member"]) == (2, 2)  # read as kube-scheduler's pods
    assert found["state"] in ("running", "placed") and found["side"] is None
    assert _explain(kubeconfig, capsys, "vcjob/placed", "--backend", "native") == found
    # Read as our scheduler's, the group is not found: what explain said before without --backend.
    argv = ["explain", "vcjob/placed", "-n", NS, "--backend", "volcano", "--kubeconfig", str(kubeconfig)]
    assert cli.main(argv) == 1
    assert f"no PodGroup for vcjob {NS}/placed not found" in capsys.readouterr().err


def _refused(api: k8s.ApiClient, name: str) -> dict[str, Any] | None:
    pg = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*apiserver.PG, NS, "podgroups", name)
    return next((c for c in pg.get("status", {}).get("conditions") or [] if c["type"] == keys.NATIVE_SYNCED), None)


def test_a_native_twin_the_apiserver_refuses_is_recorded_and_explained(
    bed: tuple[pathlib.Path, k8s.ApiClient], capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig, api = bed
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "orphaned"},
        "spec": {"minMember": 2, "queue": "default", "priorityClassName": "no-such-class"},
    }
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(*apiserver.PG, NS, "podgroups", group)
    condition = apiserver.eventually(lambda: _refused(api, "orphaned"), 30, "the refusal on the Volcano PodGroup")
    assert (condition["status"], condition["reason"]) == ("False", "Refused")
    assert "no-such-class" in condition["message"], condition
    assert nativebed.native_podgroup(api, NS, "orphaned") is None
    events = k8s.CoreV1Api(api).list_namespaced_event(NS, field_selector="involvedObject.name=orphaned").items
    assert [e.message for e in events if e.reason == "NativeGroupRefused"] == [condition["message"]]
    for backend in ((), ("--backend", "native")):
        found = _explain(kubeconfig, capsys, "pg/orphaned", *backend)
        assert found["side"] == "native-refused"
        assert found["verdict"].startswith(f"kube-scheduler cannot place it: {condition['message']}")
        assert "waits on kube-scheduler" not in found["verdict"]
