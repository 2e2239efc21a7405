"""Volcano Jobs applied unchanged, against the real apiserver, our gang scheduler and simulated nodes.

Our admission webhook defaults and validates the Job; our controller makes the PodGroup, the
plugins' objects and the pods (only once the scheduler's enqueue has moved the PodGroup out of
Pending), and runs the lifecycle; our scheduler (``scheduler.io``) binds the gang. Pods finish
by having their status written through ``pods/status``, as a kubelet would: the seed manifests
carry no simulator annotations and must not be changed. The MPI seed runs on both backends
(``planes``, each on its own control plane): on native kube-scheduler binds the gang once our
scheduler lifted the queue gate, and the lifecycle is the same.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from tests.support import apiserver, planes, schedthread, vcjobs

pytestmark = pytest.mark.integration
ROOT = pathlib.Path(__file__).resolve().parents[2]
VC = vcjobs.VC
scheduler = vcjobs.scheduler  # the fixtures
env = vcjobs.env
create_job, get_job, phase, finish = vcjobs.create_job, vcjobs.get_job, vcjobs.phase, vcjobs.finish
on = planes.on  # the fixture: each backend on its own control plane
Either = tuple[k8s.ApiClient, str, "schedthread.SchedThread | None", planes.Plane]


@pytest.fixture
def either(on: planes.Plane, request: pytest.FixtureRequest) -> Iterator[Either]:
    """The client, a fresh namespace, our scheduler binding (None on native: kube-scheduler does) and the plane."""
    sched = None
    if not on.native:
        request.getfixturevalue("sim_nodes")
        sched = request.getfixturevalue("scheduler")
    with planes.fresh_namespace(on.api, request) as ns:
        yield on.api, ns, sched, on


def seed(name: str) -> dict[str, Any]:
    body: dict[str, Any] = yaml.safe_load((ROOT / "examples" / name).read_text())
    return body


def pods_of(api: k8s.ApiClient, ns: str, job: str) -> dict[str, Any]:
    items = k8s.CoreV1Api(api).list_namespaced_pod(ns, label_selector=f"volcano.sh/job-name={job}").items
    return {p.metadata.name: p for p in items}


def _group(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any] | None:
    try:
        out: dict[str, Any] = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            *apiserver.PG, ns, "podgroups", name
        )
        return out
    except k8s.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def bound_cycles(sched: schedthread.SchedThread, keys: set[str]) -> list[set[str]]:
    """Per scheduling cycle that bound any of ``keys``, which of them it bound."""
    return [b for r in list(sched.reports) if (b := set(r.outcome.bound) & keys)]


def run_gang(
    api: k8s.ApiClient, ns: str, job: str, expected: set[str], sched: schedthread.SchedThread | None
) -> dict[str, Any]:
    """Wait for the scheduler to bind the whole gang and the simulator to run it; without ``sched``
    (native) kube-scheduler binds it, once our scheduler lifted the queue gate."""
    pods = apiserver.eventually(
        lambda: (p := pods_of(api, ns, job)) and set(p) == expected and p, what=f"pods {expected}"
    )
    keys = {f"{ns}/{name}" for name in pods}
    apiserver.eventually(
        lambda: all(p.status.phase == "Running" for p in pods_of(api, ns, job).values()), what="the gang to run"
    )
    # Every member is bound by our scheduler. (Not asserted: that one cycle binds them all. The
    # seeds' pods request nothing, so they are BestEffort, which the scheduler backfills one by
    # one once the gang is valid, as Volcano does; a cycle may split the gang.)
    if sched is not None:
        apiserver.eventually(
            lambda: set().union(*bound_cycles(sched, keys)) == keys, what="our scheduler to bind the gang"
        )
    else:  # Running: bound by kube-scheduler, which never binds a pod our queue gate still holds
        for pod in pods_of(api, ns, job).values():
            assert pod.spec.scheduler_name == "default-scheduler" and pod.spec.scheduling_group.pod_group_name
            assert pod.spec.node_name and not pod.spec.scheduling_gates, pod.metadata.name
    apiserver.eventually(lambda: phase(api, ns, job) == "Running", what="the job to be Running")
    return pods_of(api, ns, job)


def test_mpi_seed_runs_with_ssh_and_svc_and_completes_with_its_master(either: Either) -> None:
    api, ns, sched, plane = either
    core = k8s.CoreV1Api(api)
    job = create_job(api, ns, seed("volcano-job-mpi.yaml"))
    assert job["spec"]["queue"] == "default" and job["spec"]["maxRetry"] == 3
    assert [t["minAvailable"] for t in job["spec"]["tasks"]] == [1, 2]
    group_name = f"lm-mpi-job-{job['metadata']['uid']}"
    group = apiserver.eventually(lambda: _group(api, ns, group_name), what="the PodGroup")
    assert group["spec"]["minMember"] == 3 and group["spec"]["queue"] == "default"
    assert group["spec"]["minTaskMember"] == {"mpimaster": 1, "mpiworker": 2}
    assert group["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]

    expected = {"lm-mpi-job-mpimaster-0", "lm-mpi-job-mpiworker-0", "lm-mpi-job-mpiworker-1"}
    pods = run_gang(api, ns, "lm-mpi-job", expected, sched)
    master = pods["lm-mpi-job-mpimaster-0"]
    assert master.metadata.annotations["scheduling.k8s.io/group-name"] == group_name
    assert master.metadata.annotations["volcano.sh/task-spec"] == "mpimaster"
    assert master.metadata.annotations["volcano.sh/job-version"] == "0"
    assert (master.spec.hostname, master.spec.subdomain) == ("lm-mpi-job-mpimaster-0", "lm-mpi-job")
    assert master.spec.scheduler_name == plane.binder
    mounts = {m.mount_path: m for m in master.spec.containers[0].volume_mounts}
    assert "/etc/volcano" in mounts and mounts["/root/.ssh"].sub_path == ".ssh"
    ssh_volume = next(v for v in master.spec.volumes if v.name == "lm-mpi-job-ssh")
    assert ssh_volume.secret.default_mode == 0o600

    svc = core.read_namespaced_service("lm-mpi-job", ns)
    assert svc.spec.cluster_ip == "None"
    data = core.read_namespaced_config_map("lm-mpi-job-svc", ns).data
    assert data["mpiworker.host"] == "lm-mpi-job-mpiworker-0.lm-mpi-job\nlm-mpi-job-mpiworker-1.lm-mpi-job"
    assert data["mpimaster.host"] == "lm-mpi-job-mpimaster-0.lm-mpi-job"
    assert data["VC_MPIWORKER_NUM"] == "2"
    secret = core.read_namespaced_secret("lm-mpi-job-ssh", ns).data
    assert set(secret) == {"id_rsa", "id_rsa.pub", "authorized_keys", "config"}
    assert secret["id_rsa.pub"] == secret["authorized_keys"]

    finish(api, ns, "lm-mpi-job-mpimaster-0")  # the master's mpiexec returns
    apiserver.eventually(lambda: phase(api, ns, "lm-mpi-job") == "Completed", what="the job to complete")
    left = apiserver.eventually(
        lambda: (p := pods_of(api, ns, "lm-mpi-job")) and len(p) == 1 and p, what="workers to stop"
    )
    assert list(left) == ["lm-mpi-job-mpimaster-0"] and left["lm-mpi-job-mpimaster-0"].status.phase == "Succeeded"
    status = get_job(api, ns, "lm-mpi-job")["status"]
    assert status["state"]["reason"] == "CompleteJob" and status["succeeded"] == 1 and status["retryCount"] == 0
    apiserver.eventually(lambda: _group(api, ns, group_name) is None, what="the finished job's PodGroup to be released")


def test_tensorflow_seed_restarts_on_eviction_then_completes_with_its_workers(
    env: tuple[k8s.ApiClient, str, schedthread.SchedThread],
) -> None:
    api, ns, sched = env
    core = k8s.CoreV1Api(api)
    job = create_job(api, ns, seed("volcano-job-tensorflow.yaml"))
    assert apiserver.eventually(
        lambda: _group(api, ns, f"tensorflow-dist-mnist-{job['metadata']['uid']}"), what="PodGroup"
    )
    expected = {"tensorflow-dist-mnist-ps-0", "tensorflow-dist-mnist-worker-0", "tensorflow-dist-mnist-worker-1"}
    pods = run_gang(api, ns, "tensorflow-dist-mnist", expected, sched)
    env_of = {e.name: e for e in pods["tensorflow-dist-mnist-worker-1"].spec.containers[0].env}
    assert env_of["VK_TASK_INDEX"].value == "1" and env_of["VC_TASK_INDEX"].value == "1"
    assert env_of["VC_PS_HOSTS"].value_from.config_map_key_ref.name == "tensorflow-dist-mnist-svc"
    data = core.read_namespaced_config_map("tensorflow-dist-mnist-svc", ns).data
    assert data["ps.host"] == "tensorflow-dist-mnist-ps-0.tensorflow-dist-mnist"
    assert data["worker.host"] == (
        "tensorflow-dist-mnist-worker-0.tensorflow-dist-mnist\ntensorflow-dist-mnist-worker-1.tensorflow-dist-mnist"
    )
    old_uids = {p.metadata.uid for p in pods.values()}

    core.delete_namespaced_pod("tensorflow-dist-mnist-worker-0", ns)  # an eviction: PodEvicted → RestartJob
    apiserver.eventually(
        lambda: get_job(api, ns, "tensorflow-dist-mnist")["status"].get("retryCount") == 1, what="the restart"
    )
    fresh = apiserver.eventually(
        lambda: (
            (p := pods_of(api, ns, "tensorflow-dist-mnist"))
            and set(p) == expected
            and not {q.metadata.uid for q in p.values()} & old_uids
            and p
        ),
        what="a fresh gang",
    )
    assert {p.metadata.annotations["volcano.sh/job-version"] for p in fresh.values()} == {"1"}
    assert {p.metadata.annotations["volcano.sh/job-retry-count"] for p in fresh.values()} == {"1"}
    restarted = {f"{ns}/{name}" for name in expected}
    apiserver.eventually(
        lambda: all(p.status.phase == "Running" for p in pods_of(api, ns, "tensorflow-dist-mnist").values()),
        what="the restarted gang to run",
    )
    fresh_keys = {f"{ns}/{p.metadata.name}" for p in fresh.values()}
    assert all(p.spec.node_name for p in pods_of(api, ns, "tensorflow-dist-mnist").values())
    assert set().union(*bound_cycles(sched, restarted)) == fresh_keys, "the new gang bound by our scheduler"

    finish(api, ns, "tensorflow-dist-mnist-worker-0")
    finish(api, ns, "tensorflow-dist-mnist-worker-1")  # the task completes: TaskCompleted → CompleteJob
    apiserver.eventually(lambda: phase(api, ns, "tensorflow-dist-mnist") == "Completed", what="the job to complete")
    apiserver.eventually(
        lambda: "tensorflow-dist-mnist-ps-0" not in pods_of(api, ns, "tensorflow-dist-mnist"), what="ps to stop"
    )
    status = get_job(api, ns, "tensorflow-dist-mnist")["status"]
    assert (status["retryCount"], status["version"], status["succeeded"]) == (1, 2, 2)
    reasons = {e.reason for e in core.list_namespaced_event(ns).items if e.involved_object.kind == "Job"}
    assert {"PodGroupCreated", "RestartJob", "CompleteJob"} <= reasons


def test_invalid_jobs_are_denied_with_what_is_wrong(env: tuple[k8s.ApiClient, str, schedthread.SchedThread]) -> None:
    api, ns, _ = env

    def denied(body: dict[str, Any]) -> str:
        with pytest.raises(k8s.ApiException) as exc:
            create_job(api, ns, body)
        return str(exc.value.body)

    twice = seed("volcano-job-mpi.yaml")
    twice["spec"]["tasks"][1]["name"] = "mpimaster"
    assert "task name 'mpimaster' is used twice" in denied(twice)
    too_many = seed("volcano-job-mpi.yaml")
    too_many["spec"]["minAvailable"] = 4
    assert "spec.minAvailable 4 is greater than the total replicas of all tasks (3)" in denied(too_many)
    bad_action = seed("volcano-job-mpi.yaml")
    bad_action["spec"]["tasks"][0]["policies"][0]["action"] = "Explode"
    assert "policy action 'Explode' is unknown" in denied(bad_action)
    plugin = seed("volcano-job-mpi.yaml")
    plugin["spec"]["plugins"]["nccl"] = []
    assert "unknown job plugin 'nccl'" in denied(plugin)
    missing = seed("volcano-job-tensorflow.yaml")
    missing["spec"]["queue"] = "no-such-queue"
    assert "queue 'no-such-queue' does not exist" in denied(missing)
    assert k8s.CustomObjectsApi(api).list_namespaced_custom_object(*VC, ns, "jobs")["items"] == []
