"""The real mpi-operator (v0.8.2, default flags: no --gang-scheduling) with our bridge: MPIJob v2beta1.

Its own cluster, because the training-operator's MPIJob v1 CRD has the same name. The examples are
the module's ``examples/v2beta1/``, unchanged except for the namespace (and where a test says so),
in namespaces opted in with ``vbridge.io/gang-scheduling=enabled``. The launcher pod comes from a
batch/v1 Job (kube-controller-manager's Job controller), the workers straight from the operator.
Besides the shared gang's 4 cpu nodes, this module registers 2 simulated GPU nodes (4
``nvidia.com/gpu`` each) for the examples that ask for GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, gangs, operator_env, simthread, upstream
from vbridge.localcluster import binaries
from vbridge.nodesim import nodes

pytestmark = [pytest.mark.integration, pytest.mark.operators]
GROUP_NAME = apiserver.GROUP_NAME
TASK_SPEC = "volcano.sh/task-spec"
GPU = "nvidia.com/gpu"
GPU_NODES = nodes.pool(2, prefix="gpu-node", cpu="8", memory="32Gi", gpus=4)
Env = tuple[k8s.ApiClient, Any, gangs.Gang]


@pytest.fixture(scope="module")
def env(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    for api, op, gang in operator_env.running("mpi-operator", bins, tmp_path_factory):
        gpus = None
        if gang.on:
            # A second simulator for the GPU nodes; the scheduler sees every node.
            gpus = simthread.SimThread(op.lc.kubeconfig, GPU_NODES, default_run_seconds=5.0).start()
        try:
            yield api, op, gang
        finally:
            if gpus is not None:
                gpus.stop()


def example(rel: str) -> dict[str, Any]:
    return upstream.example("mpi-operator", rel)


def opted_in_namespace(api: k8s.ApiClient, name: str) -> str:
    labels = {"vbridge.io/gang-scheduling": "enabled"}
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name, labels=labels)))
    return name


def mpijob(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
        "kubeflow.org", "v2beta1", ns, "mpijobs", name
    )
    return out


def succeeded(api: k8s.ApiClient, ns: str, name: str) -> bool:
    conds = (mpijob(api, ns, name).get("status") or {}).get("conditions") or []
    return any(c["type"] == "Succeeded" and c["status"] == "True" for c in conds)


def phase(api: k8s.ApiClient, ns: str, name: str) -> str:
    found = [g for g in apiserver.podgroups(api, ns) if g["metadata"]["name"] == name]
    return str((found[0].get("status") or {}).get("phase", "")) if found else ""


def released(api: k8s.ApiClient, ns: str, name: str) -> bool:
    """The job's PodGroup is Completed, or gone (our reconciler deletes it once the job finished)."""
    found = [g for g in apiserver.podgroups(api, ns) if g["metadata"]["name"] == name]
    return not found or (found[0].get("status") or {}).get("phase") == "Completed"


def job_pods(api: k8s.ApiClient, ns: str, name: str, count: int, what: str) -> list[dict[str, Any]]:
    def probe() -> list[dict[str, Any]] | None:
        found = apiserver.pods(api, ns, f"training.kubeflow.org/job-name={name}")
        return found if len(found) == count else None

    found: list[dict[str, Any]] = apiserver.eventually(probe, timeout=60, what=what)
    return found


def stamped(pod: dict[str, Any], name: str) -> None:
    role = pod["metadata"]["labels"]["training.kubeflow.org/job-role"]
    assert pod["spec"]["schedulerName"] == "volcano"
    assert pod["metadata"]["annotations"][GROUP_NAME] == name
    assert pod["metadata"]["annotations"][TASK_SPEC] == role


def run_example(
    env: Env, ns: str, rel: str, *, min_member: int, min_resources: dict[str, str], workers: int
) -> list[dict[str, Any]]:
    """Create ``rel`` (AtStartup) and check its one PodGroup, its stamped pods, one gang bound, success."""
    api, op, gang = env
    assert gang.on, "our scheduler is part of this checkout"
    opted_in_namespace(api, ns)
    body = example(rel)
    name = body["metadata"]["name"]
    k8s.CustomObjectsApi(api).create_namespaced_custom_object("kubeflow.org", "v2beta1", ns, "mpijobs", body)
    [pg] = apiserver.eventually(lambda: apiserver.podgroups(api, ns), what=f"{name}'s PodGroup")
    assert pg["metadata"]["name"] == name
    assert pg["spec"]["minMember"] == min_member
    assert pg["spec"]["minTaskMember"] == {"launcher": 1, "worker": workers}
    assert pg["spec"]["minResources"] == min_resources
    owner = pg["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("MPIJob", name, True)

    pods = job_pods(api, ns, name, workers + 1, f"the launcher and {workers} workers\n{op.tail()}")
    roles = sorted(p["metadata"]["labels"]["training.kubeflow.org/job-role"] for p in pods)
    assert roles == ["launcher"] + ["worker"] * workers
    for pod in pods:
        stamped(pod, name)
    assert len(apiserver.podgroups(api, ns)) == 1  # the operator made none of its own
    gangs.eventually_bound(api, ns, f"training.kubeflow.org/job-name={name}", workers + 1)
    apiserver.eventually(lambda: succeeded(api, ns, name), timeout=120, what=f"{name} to succeed\n{op.tail()}")
    apiserver.eventually(lambda: released(api, ns, name), what=f"{name}'s PodGroup to complete or be collected")
    return apiserver.pods(api, ns, f"training.kubeflow.org/job-name={name}")


@pytest.mark.timeout(600)
def test_mpijob_v2beta1_pi_example(env: Env) -> None:
    # launcher + 2 workers, as mpi-operator counts; limits stand in for requests.
    run_example(
        env, "mpi-pi", "v2beta1/pi/pi.yaml", min_member=3, min_resources={"cpu": "3", "memory": "3Gi"}, workers=2
    )


@pytest.mark.timeout(600)
def test_mpijob_v2beta1_horovod_tensorflow_mnist_example(env: Env) -> None:
    # launcher 1 cpu / 2Gi + 2 workers x (2 cpu / 4Gi), from limits, as mpi-operator's calPGMinResource.
    run_example(
        env,
        "mpi-horovod",
        "v2beta1/horovod/tensorflow-mnist.yaml",
        min_member=3,
        min_resources={"cpu": "5", "memory": "10Gi"},
        workers=2,
    )


@pytest.mark.timeout(600)
def test_mpijob_v2beta1_tensorflow_benchmarks_example_lands_workers_on_gpu_nodes(env: Env) -> None:
    """Workers ask for one ``nvidia.com/gpu`` each (limits only); the launcher asks for nothing."""
    pods = run_example(
        env,
        "mpi-benchmarks",
        "v2beta1/tensorflow-benchmarks/tensorflow-benchmarks.yaml",
        min_member=3,
        min_resources={GPU: "2"},
        workers=2,
    )
    gpu_nodes = {s.name for s in GPU_NODES}
    for pod in pods:
        if pod["metadata"]["labels"]["training.kubeflow.org/job-role"] == "worker":
            assert pod["spec"]["containers"][0]["resources"]["requests"] == {GPU: "1"}  # defaulted from limits
            assert pod["spec"]["nodeName"] in gpu_nodes


@pytest.mark.timeout(600)
def test_mpijob_v2beta1_pi_wait_for_workers_ready_does_not_deadlock(env: Env) -> None:
    """``pi.yaml`` with ``spec.launcherCreationPolicy: WaitForWorkersReady`` (the one change).

    The operator creates the launcher only once every worker is Ready, so the gang is the workers
    alone: counting the launcher (as mpi-operator's own PodGroup does) waits for a pod that is never
    made (mpi-operator#608). The launcher then joins the running group and is bound on its own.
    """
    api, op, gang = env
    assert gang.on, "our scheduler is part of this checkout"
    ns = opted_in_namespace(api, "mpi-wait")
    body = example("v2beta1/pi/pi.yaml")
    body["spec"]["launcherCreationPolicy"] = "WaitForWorkersReady"
    name = body["metadata"]["name"]
    k8s.CustomObjectsApi(api).create_namespaced_custom_object("kubeflow.org", "v2beta1", ns, "mpijobs", body)
    [pg] = apiserver.eventually(lambda: apiserver.podgroups(api, ns), what=f"{name}'s PodGroup")
    assert pg["spec"]["minMember"] == 2
    assert pg["spec"]["minTaskMember"] == {"worker": 2}
    assert pg["spec"]["minResources"] == {"cpu": "2", "memory": "2Gi"}  # the workers' limits

    workers = "training.kubeflow.org/job-name=pi,training.kubeflow.org/job-role=worker"
    launcher = "training.kubeflow.org/job-name=pi,training.kubeflow.org/job-role=launcher"
    gangs.eventually_bound(api, ns, workers, 2)
    for pod in apiserver.pods(api, ns, workers):
        stamped(pod, name)
    apiserver.eventually(lambda: phase(api, ns, name) == "Running", what="the group to run on its workers alone")
    [made] = apiserver.eventually(
        lambda: apiserver.pods(api, ns, launcher), what=f"the launcher, once workers are Ready\n{op.tail()}"
    )
    stamped(made, name)
    started = [p["status"]["startTime"] for p in apiserver.pods(api, ns, workers)]
    assert len(started) == 2 and made["metadata"]["creationTimestamp"] >= max(started)  # once the workers ran
    gangs.eventually_bound(api, ns, launcher, 1)
    apiserver.eventually(lambda: succeeded(api, ns, name), timeout=120, what=f"{name} to succeed\n{op.tail()}")
    assert len(apiserver.podgroups(api, ns)) <= 1
    apiserver.eventually(lambda: released(api, ns, name), what=f"{name}'s PodGroup to complete or be collected")
