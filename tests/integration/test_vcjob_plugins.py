"""Volcano's own examples for task dependencies and the framework plugins, applied unchanged.

Against the real apiserver with our webhook, Job controller and scheduler and simulated nodes:
``example/task-start-dependency`` (the MPI master dependsOn its 10 workers; a chain of three
nginx tasks) must start its tasks in dependency order and still run, and the ``tensorflow``,
``pytorch`` and ``mpi`` plugin examples from Volcano's guides must give their pods what the
guides promise (``TF_CONFIG``; ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE``, ``RANK``;
``MPI_HOST``, the hosts files, the ssh keys), computed from the objects our controller made
by the node simulator's own kubelet rules (``tests.support.vcjobs``).
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Sequence
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from tests.support import apiserver, vcjobs

pytestmark = pytest.mark.integration
ROOT = pathlib.Path(__file__).resolve().parents[2]
Env = vcjobs.Env
scheduler = vcjobs.scheduler
env = vcjobs.env


def example(name: str) -> dict[str, Any]:
    body: dict[str, Any] = next(d for d in yaml.safe_load_all((ROOT / "examples" / name).read_text()) if d)
    return body


def _first(events: Sequence[vcjobs.PodEvent], name: str, *, ready: bool = False) -> int:
    return next(i for i, e in enumerate(events) if e.name == name and (e.ready or not ready))


def test_the_mpi_master_is_made_after_its_workers_run_and_the_job_completes(env: Env) -> None:
    api, ns, sched = env
    workers = [f"lm-mpi-job-mpiworker-{i}" for i in range(10)]
    master = "lm-mpi-job-mpimaster-0"
    made: list[dict[str, Any]] = []
    events = vcjobs.pod_events(
        api,
        ns,
        lambda: made.append(vcjobs.create_job(api, ns, example("volcano/depends-on-mpi.yaml"))),
        lambda seen: any(e.name == master and e.ready for e in seen),
    )
    # The gang forms from the workers alone; the master's pod is made once all ten run, ready.
    assert _first(events, master) > max(_first(events, w, ready=True) for w in workers), events
    group = apiserver.podgroups(api, ns)[0]
    assert group["metadata"]["name"] == f"lm-mpi-job-{made[0]['metadata']['uid']}"
    assert group["spec"]["minMember"] == 3 and "minTaskMember" not in group["spec"]
    pods = vcjobs.running(api, ns, "lm-mpi-job", {*workers, master})
    order = apiserver.eventually(
        lambda: (o := vcjobs.bind_order(sched, {f"{ns}/{p}" for p in pods})) and len(o) == 11 and o,
        what="our scheduler to bind all 11 pods",
    )
    assert max(order[f"{ns}/{w}"] for w in workers) < order[f"{ns}/{master}"], "bound before the workers"
    env_of = vcjobs.environment(api, ns, pods[master], "mpimaster")
    assert env_of["VC_MPIWORKER_NUM"] == "10"
    hosts = vcjobs.files(api, ns, pods[master], "mpimaster", "/etc/volcano")["mpiworker.host"]
    assert hosts.splitlines() == [f"lm-mpi-job-mpiworker-{i}.lm-mpi-job" for i in range(10)]
    apiserver.eventually(lambda: vcjobs.phase(api, ns, "lm-mpi-job") == "Running", what="the job to run")

    vcjobs.finish(api, ns, master)  # mpiexec returns: TaskCompleted → CompleteJob
    apiserver.eventually(lambda: vcjobs.phase(api, ns, "lm-mpi-job") == "Completed", what="the job to complete")
    apiserver.eventually(lambda: set(vcjobs.pods_of(api, ns, "lm-mpi-job")) == {master}, what="workers to stop")


def test_without_min_available_the_gang_is_the_workers_and_the_job_still_runs(env: Env) -> None:
    """Volcano would gang all 11 pods, the master's included, which cannot exist before the
    workers run: its gang never forms. Here the group gangs the 10 workers, with a warning."""
    api, ns, _ = env
    body = example("volcano/depends-on-mpi.yaml")
    del body["spec"]["minAvailable"]
    _, _, headers = k8s.CustomObjectsApi(api).create_namespaced_custom_object_with_http_info(
        *vcjobs.VC, ns, "jobs", body
    )
    assert "it gangs the 10 pods of mpiworker that start first" in headers.get("Warning", "")
    group = apiserver.eventually(lambda: next(iter(apiserver.podgroups(api, ns)), None), what="the PodGroup")
    assert (group["spec"]["minMember"], group["spec"]["minTaskMember"]) == (10, {"mpiworker": 10})
    vcjobs.running(api, ns, "lm-mpi-job", {"lm-mpi-job-mpimaster-0", *(f"lm-mpi-job-mpiworker-{i}" for i in range(10))})
    apiserver.eventually(lambda: vcjobs.phase(api, ns, "lm-mpi-job") == "Running", what="the job to run")
    assert vcjobs.get_job(api, ns, "lm-mpi-job")["status"]["minAvailable"] == 11


def test_a_chain_of_tasks_starts_one_link_at_a_time(env: Env) -> None:
    api, ns, _ = env
    first = ["job-job-nginx1-0"]
    second = [f"job-job-nginx2-{i}" for i in range(5)]
    third = [f"job-job-nginx3-{i}" for i in range(5)]
    events = vcjobs.pod_events(
        api,
        ns,
        lambda: vcjobs.create_job(api, ns, example("volcano/depends-on-chain.yaml")),
        lambda seen: {e.name for e in seen if e.ready} >= {*first, *second, *third},
    )
    assert min(_first(events, p) for p in second) > _first(events, first[0], ready=True)
    assert min(_first(events, p) for p in third) > max(_first(events, p, ready=True) for p in second)
    apiserver.eventually(lambda: vcjobs.phase(api, ns, "job") == "Running", what="the job to run")


def test_framework_plugin_examples_give_their_pods_what_volcano_documents(env: Env) -> None:
    api, ns, _ = env
    core, net = k8s.CoreV1Api(api), k8s.NetworkingV1Api(api)
    for name in ("tensorflow", "pytorch", "mpi"):
        created = vcjobs.create_job(api, ns, example(f"volcano/{name}-plugin.yaml"))
        assert "svc" in created["spec"]["plugins"], "the framework plugins bring svc, as Volcano's webhook adds it"

    tf = vcjobs.running(
        api, ns, "tensorflow-dist-mnist", {f"tensorflow-dist-mnist-{t}" for t in ("ps-0", "worker-0", "worker-1")}
    )
    cluster_spec = {
        "ps": ["tensorflow-dist-mnist-ps-0.tensorflow-dist-mnist:2222"],
        "worker": [f"tensorflow-dist-mnist-worker-{i}.tensorflow-dist-mnist:2222" for i in range(2)],
    }
    for pod_name, (kind, index) in {"ps-0": ("ps", 0), "worker-1": ("worker", 1)}.items():
        seen = vcjobs.environment(api, ns, tf[f"tensorflow-dist-mnist-{pod_name}"], "tensorflow")
        assert json.loads(seen["TF_CONFIG"]) == {"cluster": cluster_spec, "task": {"type": kind, "index": index}}

    pt = vcjobs.running(
        api, ns, "pytorch-job", {"pytorch-job-master-0", "pytorch-job-worker-0", "pytorch-job-worker-1"}
    )
    for pod_name, rank in (("master-0", "0"), ("worker-0", "1"), ("worker-1", "2")):
        pod = pt[f"pytorch-job-{pod_name}"]
        seen = vcjobs.environment(api, ns, pod, pod_name.split("-")[0])
        assert (seen["MASTER_ADDR"], seen["MASTER_PORT"], seen["WORLD_SIZE"], seen["RANK"]) == (
            "pytorch-job-master-0.pytorch-job",
            "23456",
            "3",
            rank,
        )
        assert {"name": "pytorchjob-port", "containerPort": 23456, "protocol": "TCP"} in pod["spec"]["containers"][0][
            "ports"
        ]
    wait = pt["pytorch-job-worker-0"]["spec"]["initContainers"][0]
    assert (wait["name"], wait["image"]) == ("wait-for-master", "busybox:1.36.1")
    assert "TIMEOUT=600" in wait["command"][2], "--wait-master-timeout=600 from the example"

    mpi = vcjobs.running(
        api, ns, "lm-mpi-job", {"lm-mpi-job-mpimaster-0", "lm-mpi-job-mpiworker-0", "lm-mpi-job-mpiworker-1"}
    )
    master = mpi["lm-mpi-job-mpimaster-0"]
    seen = vcjobs.environment(api, ns, master, "mpimaster")
    assert seen["MPI_HOST"] == "lm-mpi-job-mpiworker-0.lm-mpi-job,lm-mpi-job-mpiworker-1.lm-mpi-job"
    assert "MPI_HOST" not in vcjobs.environment(api, ns, mpi["lm-mpi-job-mpiworker-0"], "mpiworker")
    assert master["spec"]["containers"][0]["ports"] == [{"name": "mpijob-port", "containerPort": 22, "protocol": "TCP"}]
    hostfile = vcjobs.files(api, ns, master, "mpimaster", "/etc/volcano")
    assert hostfile["mpiworker.host"] == "lm-mpi-job-mpiworker-0.lm-mpi-job\nlm-mpi-job-mpiworker-1.lm-mpi-job"
    keys = vcjobs.files(api, ns, master, "mpimaster", "/root/.ssh")
    assert (
        set(keys) == {"id_rsa", "id_rsa.pub", "authorized_keys", "config"}
        and keys["authorized_keys"] == keys["id_rsa.pub"]
    )

    for job in ("tensorflow-dist-mnist", "pytorch-job", "lm-mpi-job"):
        owner = vcjobs.get_job(api, ns, job)["metadata"]["uid"]
        policy = net.read_namespaced_network_policy(job, ns)
        assert policy.metadata.owner_references[0].uid == owner
        assert policy.spec.pod_selector.match_labels == {"volcano.sh/job-name": job, "volcano.sh/job-namespace": ns}
        assert policy.spec.ingress[0]._from[0].pod_selector.match_labels == policy.spec.pod_selector.match_labels
        assert core.read_namespaced_service(job, ns).metadata.owner_references[0].uid == owner

    for worker in ("tensorflow-dist-mnist-worker-0", "tensorflow-dist-mnist-worker-1"):
        vcjobs.finish(api, ns, worker)  # the workers' training ends: TaskCompleted → CompleteJob
    apiserver.eventually(lambda: vcjobs.phase(api, ns, "tensorflow-dist-mnist") == "Completed", what="TF to complete")


def test_a_svc_without_network_policy_gets_none(env: Env) -> None:
    api, ns, _ = env
    body = example("volcano-job-tensorflow.yaml")
    body["spec"]["plugins"]["svc"] = ["--disable-network-policy=true"]
    vcjobs.create_job(api, ns, body)
    # Pods are made only after the plugins' objects: once they exist, every object has been made.
    expected = {"tensorflow-dist-mnist-ps-0", "tensorflow-dist-mnist-worker-0", "tensorflow-dist-mnist-worker-1"}
    vcjobs.running(api, ns, "tensorflow-dist-mnist", expected)
    assert k8s.CoreV1Api(api).read_namespaced_config_map("tensorflow-dist-mnist-svc", ns).data["VC_PS_NUM"] == "1"
    assert k8s.NetworkingV1Api(api).list_namespaced_network_policy(ns).items == []
