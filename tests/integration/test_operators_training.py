"""The real training-operator (v1.9.4, default flags: no --gang-scheduler-name) with our bridge.

TFJob, PyTorchJob, MPIJob v1, XGBoostJob, PaddleJob and JAXJob examples from the operator's own
module (``examples/``), unchanged except for the namespace (the last three also ask for resources
and a queue, so their groups show both), in a namespace opted in with
``vbridge.io/gang-scheduling=enabled``.
The operator's validating webhooks run too (its own configuration from manifests/base/webhook).
Each job gets exactly one PodGroup (ours), and every pod the operator creates carries the stamps.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, gangs, operator_env, upstream
from vbridge.localcluster import binaries

pytestmark = [pytest.mark.integration, pytest.mark.operators]
GROUP_NAME = apiserver.GROUP_NAME
Env = tuple[k8s.ApiClient, Any, gangs.Gang]
TASK_SPEC = "volcano.sh/task-spec"


@pytest.fixture(scope="module")
def env(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    yield from operator_env.running("training-operator", bins, tmp_path_factory)


def example(rel: str) -> dict[str, Any]:
    return upstream.example("training-operator", rel)


def opted_in_namespace(api: k8s.ApiClient, name: str) -> str:
    labels = {"vbridge.io/gang-scheduling": "enabled"}
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name, labels=labels)))
    return name


def create(api: k8s.ApiClient, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        "kubeflow.org", "v1", ns, body["kind"].lower() + "s", body
    )
    return out


def job_pods(api: k8s.ApiClient, op: Any, ns: str, job: str, count: int) -> list[dict[str, Any]]:
    def probe() -> list[dict[str, Any]] | None:
        found = apiserver.pods(api, ns, f"training.kubeflow.org/job-name={job}")
        return found if len(found) == count else None

    return apiserver.eventually(probe, timeout=60, what=f"{count} pods of {job}\n{op.tail()}")


def check(
    api: k8s.ApiClient,
    op: Any,
    gang: gangs.Gang,
    ns: str,
    kind: str,
    job: str,
    roles: dict[str, int],
    *,
    pod_count: int | None = None,
) -> dict[str, Any]:
    """The job's one PodGroup (gang ``roles``), its ``pod_count`` pods stamped, bound and run to success."""
    count = sum(roles.values()) if pod_count is None else pod_count
    [pg] = apiserver.eventually(lambda: apiserver.podgroups(api, ns), what=f"{job}'s PodGroup")
    assert pg["metadata"]["name"] == job
    assert pg["spec"]["minMember"] == sum(roles.values())
    assert pg["spec"]["minTaskMember"] == {r.lower(): n for r, n in roles.items()}
    owner = pg["metadata"]["ownerReferences"][0]
    assert owner["name"] == job and owner["controller"] is True
    pods = job_pods(api, op, ns, job, count)
    for pod in pods:
        role = pod["metadata"]["labels"]["training.kubeflow.org/replica-type"]
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["metadata"]["annotations"][GROUP_NAME] == job
        assert pod["metadata"]["annotations"][TASK_SPEC] == role
    assert len(apiserver.podgroups(api, ns)) == 1  # the operator made none of its own
    if gang.on:
        # Our scheduler binds the whole gang; the simulated nodes finish the pods, so the
        # operator sees its job through to the end.
        gangs.eventually_bound(api, ns, f"training.kubeflow.org/job-name={job}", count)
        apiserver.eventually(
            lambda: condition(api, ns, kind, job) == "Succeeded", timeout=120, what=f"{job} to succeed\n{op.tail()}"
        )
    return pg


def condition(api: k8s.ApiClient, ns: str, kind: str, job: str) -> str:
    obj = k8s.CustomObjectsApi(api).get_namespaced_custom_object("kubeflow.org", "v1", ns, kind, job)
    conds = [c["type"] for c in (obj.get("status") or {}).get("conditions") or [] if c.get("status") == "True"]
    return conds[-1] if conds else ""


@pytest.mark.timeout(600)
def test_tfjob_simple_example(env: Env) -> None:
    api, op, gang = env
    ns = opted_in_namespace(api, "tf")
    create(api, ns, example("tensorflow/simple.yaml"))
    check(api, op, gang, ns, "tfjobs", "tfjob-simple", {"Worker": 2})


@pytest.mark.timeout(600)
def test_pytorchjob_simple_example(env: Env) -> None:
    api, op, gang = env
    ns = opted_in_namespace(api, "torch")
    create(api, ns, example("pytorch/simple.yaml"))
    check(api, op, gang, ns, "pytorchjobs", "pytorch-simple", {"Master": 1, "Worker": 1})


@pytest.mark.timeout(600)
def test_mpijob_v1_example(env: Env) -> None:
    api, op, gang = env
    ns = opted_in_namespace(api, "mpi-v1")
    create(api, ns, example("mpi/tensorflow-mnist.yaml"))
    check(api, op, gang, ns, "mpijobs", "tensorflow-mnist", {"Launcher": 1, "Worker": 2})


QUEUE = "training"
# (example, kind plural, job name, gang): every replica, as the training-operator counts them.
MORE_KINDS = [
    ("xgboost/xgboostjob.yaml", "xgboostjobs", "xgboost-dist-iris-test-train", {"Master": 1, "Worker": 2}),
    ("paddlepaddle/simple-cpu.yaml", "paddlejobs", "paddle-simple-cpu", {"Worker": 2}),
    ("jax/cpu-demo/demo.yaml", "jaxjobs", "jaxjob-simple", {"Worker": 2}),
]


def ensure_queue(api: k8s.ApiClient, name: str) -> None:
    body = {"apiVersion": "/".join(apiserver.PG), "kind": "Queue", "metadata": {"name": name}, "spec": {"weight": 1}}
    try:
        k8s.CustomObjectsApi(api).create_cluster_custom_object(*apiserver.PG, "queues", body)
    except k8s.ApiException as exc:
        if exc.status != 409:
            raise


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("rel", "plural", "job", "roles"), MORE_KINDS, ids=[k[1] for k in MORE_KINDS])
def test_xgboost_paddle_and_jax_examples_run_as_one_gang(
    env: Env, rel: str, plural: str, job: str, roles: dict[str, int]
) -> None:
    """The example, each of its containers asking for 1 cpu and 1 Gi, in queue ``training``
    (``runPolicy.schedulingPolicy.queue``): one PodGroup of every replica, minResources their sum."""
    api, op, gang = env
    assert gang.on, "our scheduler is part of this checkout"
    ensure_queue(api, QUEUE)
    ns = opted_in_namespace(api, plural.removesuffix("s"))
    body = example(rel)
    assert body["metadata"]["name"] == job
    for replica in next(v for k, v in body["spec"].items() if k.endswith("ReplicaSpecs")).values():
        for container in replica["template"]["spec"]["containers"]:
            container["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    body["spec"]["runPolicy"] = {"schedulingPolicy": {"queue": QUEUE}}
    create(api, ns, body)
    pg = check(api, op, gang, ns, plural, job, roles)
    size = sum(roles.values())
    assert pg["spec"]["queue"] == QUEUE
    assert pg["spec"]["minResources"] == {"cpu": str(size), "memory": f"{size}Gi"}
    apiserver.eventually(lambda: released(api, ns, job), what=f"{job}'s PodGroup to complete or be collected")


@pytest.mark.timeout(600)
def test_operator_validating_webhook_is_live(env: Env) -> None:
    api, _, _ = env
    ns = opted_in_namespace(api, "invalid")
    body = example("tensorflow/simple.yaml")
    body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] = "not-tensorflow"
    with pytest.raises(k8s.ApiException) as denied:
        create(api, ns, body)
    assert "validator.tfjob.training-operator.kubeflow.org" in denied.value.body


def released(api: k8s.ApiClient, ns: str, job: str) -> bool:
    """The job's PodGroup is Completed, or gone (our reconciler deletes it once the job finished)."""
    found = [g for g in apiserver.podgroups(api, ns) if g["metadata"]["name"] == job]
    return not found or (found[0].get("status") or {}).get("phase") == "Completed"


@pytest.mark.timeout(600)
def test_pytorchjob_elastic_echo_example_gangs_min_replicas(env: Env) -> None:
    """``pytorch/elastic/echo/echo.yaml``, unchanged: 2 workers, elasticPolicy minReplicas 1, maxReplicas 2.

    The gang is minReplicas workers (1), so an elastic job may start below its size. The real
    operator started with ``--gang-scheduler-name=volcano`` counts every replica (2): its
    common/job.go reads only ``runPolicy.schedulingPolicy.minAvailable``, which users then set to
    minReplicas by hand (kubeflow/trainer#1571); the bridge sets it for them.
    """
    api, op, gang = env
    assert gang.on, "our scheduler is part of this checkout"
    ns = opted_in_namespace(api, "torch-elastic")
    body = example("pytorch/elastic/echo/echo.yaml")
    assert body["spec"]["elasticPolicy"]["minReplicas"] == 1
    assert body["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2
    job = body["metadata"]["name"]
    create(api, ns, body)
    pg = check(api, op, gang, ns, "pytorchjobs", job, {"Worker": 1}, pod_count=2)
    assert not pg["spec"].get("minResources")  # the example asks for nothing; neither does the operator
    assert pg["spec"]["queue"] == "default"
    apiserver.eventually(lambda: released(api, ns, job), what=f"{job}'s PodGroup to complete or be collected")


TF_PAIR_WORKERS = 3
TF_PAIR_CPU = 6  # 3 x 6 cpu fits the 4 nodes of 8 cpu; 6 pods of 6 cpu need 6 nodes


def tf_pair_job(name: str) -> dict[str, Any]:
    """``tensorflow/simple.yaml`` with another name, 3 workers instead of 2 and a 6 cpu request each."""
    body = example("tensorflow/simple.yaml")
    body["metadata"]["name"] = name
    worker = body["spec"]["tfReplicaSpecs"]["Worker"]
    worker["replicas"] = TF_PAIR_WORKERS
    worker["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": str(TF_PAIR_CPU)}}
    return body


def holding(pod: dict[str, Any]) -> bool:
    """Bound and not finished: the pod holds its node's resources."""
    return bool(pod["spec"].get("nodeName")) and pod["status"].get("phase") not in ("Succeeded", "Failed")


def unschedulable(group: dict[str, Any]) -> bool:
    """Waiting as a gang: Pending or Inqueue with a true Unschedulable condition."""
    status = group.get("status") or {}
    conditions = status.get("conditions") or []
    waiting = any(c.get("type") == "Unschedulable" and c.get("status") == "True" for c in conditions)
    return status.get("phase") in ("Pending", "Inqueue") and waiting


@pytest.mark.timeout(600)
def test_two_tfjobs_that_cannot_both_fit_run_one_after_the_other_each_whole(env: Env) -> None:
    """Two TFJobs of 3 x 6 cpu workers, created together on 4 nodes of 8 cpu.

    Each fits alone (one worker a node); together they need 6 nodes. Built from the upstream
    ``tensorflow/simple.yaml`` with the name, the worker count (3) and a cpu request (6) changed.
    Without gangs each job could grab part of the nodes and both would hang half-started. With
    them one job runs whole while the other's group waits Unschedulable, then the other runs whole.
    """
    api, op, gang = env
    assert gang.on, "our scheduler is part of this checkout"
    ns = opted_in_namespace(api, "tf-pair")
    jobs = ("tf-pair-a", "tf-pair-b")
    for job in jobs:
        create(api, ns, tf_pair_job(job))

    assert gang.sched is not None
    order: list[str] = []  # the jobs, as their first pod was seen bound
    whole: set[str] = set()  # the jobs all of whose pods were seen bound
    waiting: list[dict[str, Any]] = []  # the other job's PodGroup status while one job ran

    def observe() -> bool:
        """One look after each scheduler cycle; whether both jobs succeeded."""
        assert gang.sched is not None
        gang.sched.cycles.ended()
        if all(condition(api, ns, "tfjobs", j) == "Succeeded" for j in jobs):
            return True
        by_job = {j: apiserver.pods(api, ns, f"training.kubeflow.org/job-name={j}") for j in jobs}
        held = {j: [p["metadata"]["name"] for p in found if holding(p)] for j, found in by_job.items()}
        assert not all(held.values()), f"both jobs hold nodes at once: {held}"
        for job, found in by_job.items():
            bound = [p for p in found if p["spec"].get("nodeName")]
            if bound and job not in order:
                order.append(job)
            if len(bound) == TF_PAIR_WORKERS and job not in whole:
                whole.add(job)
                # While the job runs (its PodGroup still there): bound as one gang, in one cycle.
                gangs.eventually_bound(api, ns, f"training.kubeflow.org/job-name={job}", TF_PAIR_WORKERS)
        running = [j for j in jobs if held[j] and j in whole]
        if running:
            [other] = [j for j in jobs if j != running[0]]
            groups = {g["metadata"]["name"]: g for g in apiserver.podgroups(api, ns)}
            if other not in order and other in groups:
                waiting.append(groups[other].get("status") or {})
        return False

    try:
        apiserver.eventually(observe, 240, "both TFJobs to succeed")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{apiserver.podgroups(api, ns)}\n{op.tail()}") from None

    assert len(order) == 2, order
    binds = gang.log.binds()
    for job in jobs:
        # Whole gangs: all of a job's pods were bound in one cycle, not one now and the rest later.
        found = apiserver.pods(api, ns, f"training.kubeflow.org/job-name={job}")
        cycles = {binds[f"{ns}/{p['metadata']['name']}"].cycle for p in found}
        assert job in whole and len(cycles) == 1, (job, cycles)
        # TFJob succeeds once worker 0 has (its default success policy): the others may finish later.
        apiserver.eventually(
            lambda job=job: (
                sorted(
                    p["status"].get("phase") for p in apiserver.pods(api, ns, f"training.kubeflow.org/job-name={job}")
                )
                == ["Succeeded"] * TF_PAIR_WORKERS
            ),
            what=f"every worker of {job} to succeed",
        )
    first, second = order
    finished = max(
        c["state"]["terminated"]["finishedAt"]
        for p in apiserver.pods(api, ns, f"training.kubeflow.org/job-name={first}")
        for c in p["status"]["containerStatuses"]
    )
    scheduled = min(
        c["lastTransitionTime"]
        for p in apiserver.pods(api, ns, f"training.kubeflow.org/job-name={second}")
        for c in p["status"]["conditions"]
        if c["type"] == "PodScheduled"
    )
    assert finished <= scheduled, f"{second} was bound at {scheduled}, before {first} finished at {finished}"
    assert any(unschedulable({"status": s}) for s in waiting), f"{second}'s group while {first} ran: {waiting}"
    for job in jobs:
        apiserver.eventually(
            functools.partial(released, api, ns, job), what=f"{job}'s PodGroup to complete or be collected"
        )
