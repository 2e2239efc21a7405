"""Two ``vbridge controllers --leader-elect`` processes against a real kube-apiserver: exactly one
reconciles; the leader SIGKILLed mid-reconcile is replaced within the lease duration and nothing is
done twice; SIGTERM hands the Lease back.

Its own control plane: the session's ``bridge`` fixture runs reconcilers too, which would act
on these jobs as a third controller.
"""

from __future__ import annotations

import collections
import pathlib
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.builders import kubeflow as kf
from tests.support import apiserver, ctlproc, upstream
from vbridge.localcluster import binaries, cluster

pytestmark = pytest.mark.integration
VC = ("batch.volcano.sh", "v1alpha1")
KF = ("kubeflow.org", "v1")
LEASE_SECONDS, RENEW_SECONDS, RETRY_SECONDS = 4.0, 3.0, 0.5


@pytest.fixture(scope="module")
def lc(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.LocalCluster]:
    with apiserver.started(cluster.LocalCluster(tmp_path_factory.mktemp("ha-cluster"), bins=bins)) as own:
        upstream.install(own, "training-operator")
        yield own


@pytest.fixture(scope="module")
def api(lc: cluster.LocalCluster) -> Iterator[k8s.ApiClient]:
    with apiserver.client_of(lc) as out:
        yield out


def start(lc: cluster.LocalCluster, name: str, lease: str, logs: pathlib.Path) -> tuple[ctlproc.Proc, str]:
    port = cluster.free_port()
    args = [
        "controllers",
        f"--kubeconfig={lc.kubeconfig}",
        "--leader-elect",
        "--lease-namespace=default",
        f"--lease-name={lease}",
        "--scheduler-name=ha",
        f"--health-port={port}",
        f"--lease-duration={LEASE_SECONDS}",
        f"--renew-deadline={RENEW_SECONDS}",
        f"--retry-period={RETRY_SECONDS}",
        "-v",
    ]
    return ctlproc.Proc(name, args, logs), f"http://127.0.0.1:{port}"


def holder(api: k8s.ApiClient, lease: str) -> str:
    try:
        spec = k8s.CoordinationV1Api(api).read_namespaced_lease(lease, "default").spec
    except k8s.ApiException as exc:
        if exc.status == 404:
            return ""
        raise
    return str(spec.holder_identity or "")


def vcjob(name: str, tasks: dict[str, int]) -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "ha",
            "queue": "default",
            "minAvailable": sum(tasks.values()),
            "tasks": [{"name": t, "replicas": n, "template": template} for t, n in tasks.items()],
        },
    }


def admit_group(api: k8s.ApiClient, ns: str, job: dict[str, Any]) -> None:
    """Move the job's PodGroup out of Pending, as the scheduler's enqueue would."""
    name = f"{job['metadata']['name']}-{job['metadata']['uid']}"
    custom = k8s.CustomObjectsApi(api)

    def found() -> bool:
        try:
            custom.get_namespaced_custom_object(*apiserver.PG, ns, "podgroups", name)
        except k8s.ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    apiserver.eventually(found, 20, f"PodGroup {name}")
    custom.patch_namespaced_custom_object(*apiserver.PG, ns, "podgroups", name, {"status": {"phase": "Inqueue"}})


def pods(api: k8s.ApiClient, ns: str, job: str) -> dict[str, str]:
    items = k8s.CoreV1Api(api).list_namespaced_pod(ns, label_selector=f"volcano.sh/job-name={job}").items
    return {p.metadata.name: p.metadata.uid for p in items}


def pods_if(api: k8s.ApiClient, ns: str, job: str, count: int) -> dict[str, str] | None:
    out = pods(api, ns, job)
    return out if len(out) == count else None


def events(api: k8s.ApiClient, ns: str, reason: str) -> collections.Counter[str]:
    items = k8s.CoreV1Api(api).list_namespaced_event(ns).items
    return collections.Counter(e.involved_object.name for e in items if e.reason == reason)


@pytest.mark.timeout(150)
def test_one_leader_reconciles_and_a_killed_leader_is_replaced_without_doing_anything_twice(
    lc: cluster.LocalCluster, api: k8s.ApiClient, tmp_path: pathlib.Path
) -> None:
    lease = "ha-" + uuid.uuid4().hex[:6]
    ns = "ha-" + uuid.uuid4().hex[:6]
    core, custom = k8s.CoreV1Api(api), k8s.CustomObjectsApi(api)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    a, a_url = start(lc, "a", lease, tmp_path)
    b, b_url = start(lc, "b", lease, tmp_path)
    procs = {a.identity: a, b.identity: b}
    try:
        for proc, url in ((a, a_url), (b, b_url)):
            ctlproc.wait_for(url + "/readyz", 200, proc)  # a standby is ready too
            assert ctlproc.probe(url + "/healthz") == 200
        first = apiserver.eventually(lambda: holder(api, lease), 20, "a leader")
        leader = procs[first]
        standby = b if leader is a else a

        # Exactly one reconciles: one PodGroupCreated Event for the TFJob, one set of pods.
        tfjob = kf.tfjob("mnist", Worker=kf.replica(2))
        tfjob["metadata"]["namespace"] = ns
        custom.create_namespaced_custom_object(*KF, ns, "tfjobs", tfjob)
        apiserver.eventually(lambda: events(api, ns, "PodGroupCreated")["mnist"], 20, "the TFJob's PodGroup")
        j1 = custom.create_namespaced_custom_object(*VC, ns, "jobs", vcjob("one", {"w": 3}))
        admit_group(api, ns, j1)
        before = apiserver.eventually(lambda: pods_if(api, ns, "one", 3), 20, "3 pods")

        # Kill the leader while it creates a job of 2 tasks x 4 pods.
        j2 = custom.create_namespaced_custom_object(*VC, ns, "jobs", vcjob("two", {"ps": 4, "worker": 4}))
        admit_group(api, ns, j2)
        deadline = time.monotonic() + 10
        while not pods(api, ns, "two") and time.monotonic() < deadline:
            pass  # kill as soon as the first pod is there: mid-way through the job, if we can
        leader.kill()
        killed = time.monotonic()
        at_kill = pods(api, ns, "two")
        apiserver.eventually(lambda: holder(api, lease) == standby.identity, LEASE_SECONDS + 5, "the standby to lead")
        took_over = time.monotonic() - killed
        after = apiserver.eventually(lambda: pods_if(api, ns, "two", 8), 20, "8 pods")
        done = time.monotonic() - killed
        print(
            f"failover: Lease taken over {took_over:.2f} s after SIGKILL; job complete after {done:.2f} s; "
            f"{len(at_kill)} of 8 pods existed at the kill"
        )
        assert took_over <= LEASE_SECONDS + 2 * RETRY_SECONDS + 1.0

        time.sleep(2 * RETRY_SECONDS + 1)  # the new leader relisted everything: let it act on it
        assert pods(api, ns, "two") == after and len(after) == 8
        assert all(after[name] == uid for name, uid in at_kill.items())  # no pod replaced
        assert sorted(after) == sorted(f"two-{t}-{i}" for t in ("ps", "worker") for i in range(4))
        assert pods(api, ns, "one") == before  # the first job untouched by the new leader
        for name in ("one", "two"):
            status = custom.get_namespaced_custom_object(*VC, ns, "jobs", name).get("status") or {}
            assert status.get("retryCount", 0) == 0, status
        groups = custom.list_namespaced_custom_object(*apiserver.PG, ns, "podgroups")["items"]
        assert sorted(g["metadata"]["name"] for g in groups) == sorted(
            [
                f"one-{j1['metadata']['uid']}",
                f"two-{j2['metadata']['uid']}",
                *[g["metadata"]["name"] for g in groups if g["metadata"]["name"].startswith("mnist")],
            ]
        )
        assert events(api, ns, "PodGroupCreated")["mnist"] == 1  # the new leader found it made

        # SIGTERM: the reconcilers stop, the Lease is handed back, exit 0.
        assert standby.terminate() == 0, standby.tail()
        assert holder(api, lease) == ""
    except BaseException:
        for proc in procs.values():
            print(f"--- {proc.name}\n{proc.tail()}")
        raise
    finally:
        for proc in procs.values():
            proc.stop()
        core.delete_namespace(ns)
