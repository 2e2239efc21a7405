"""The objects a Job owns: PodGroup, pods with Volcano's keys, and the svc/env/ssh plugins."""

from __future__ import annotations

from bridge.adapters.vcjob import plugins, podgroup, pods
from tests.builders import vcjob as jobs

KEYS = plugins.KeyPair(private_pem="-----PRIVATE-----\n", public_openssh="ssh-rsa AAAA\n")


def test_podgroup_is_named_by_uid_and_carries_the_gang() -> None:
    job = jobs.mpi()
    group = podgroup.build(job, {})
    assert group["metadata"]["name"] == "lm-mpi-job-u-1" and group["metadata"]["namespace"] == "team-a"
    assert group["spec"] == {"minMember": 3, "queue": "default", "minTaskMember": {"mpimaster": 1, "mpiworker": 2}}


def test_min_resources_take_the_first_min_available_pods_by_task_priority() -> None:
    job = jobs.tf()
    job["spec"]["minAvailable"] = 2
    ps, worker = (t["template"]["spec"] for t in job["spec"]["tasks"])
    ps["containers"][0]["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    worker["containers"][0]["resources"] = {"requests": {"cpu": "4", "nvidia.com/gpu": "1"}}
    assert podgroup.min_resources(job, {}) == {"cpu": "5", "memory": "1Gi", "nvidia.com/gpu": "1"}
    worker["priorityClassName"] = "high"
    assert podgroup.min_resources(job, {"high": 1000}) == {"cpu": "8", "nvidia.com/gpu": "2"}


def test_pod_has_volcano_keys_group_and_owner() -> None:
    job = jobs.tf(version=2, retryCount=1)
    body = pods.build(job, task="worker", index=1)
    meta = body["metadata"]
    assert meta["name"] == "tensorflow-dist-mnist-worker-1"
    assert meta["annotations"] == {
        "scheduling.k8s.io/group-name": "tensorflow-dist-mnist-u-1",
        "volcano.sh/job-name": "tensorflow-dist-mnist",
        "volcano.sh/job-namespace": "team-a",
        "volcano.sh/queue-name": "default",
        "volcano.sh/task-spec": "worker",
        "volcano.sh/task-index": "1",
        "volcano.sh/job-version": "2",
        "volcano.sh/job-retry-count": "1",
    }
    assert meta["labels"]["volcano.sh/job-name"] == "tensorflow-dist-mnist"
    owner = meta["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("Job", "u-1", True)
    assert body["spec"]["schedulerName"] == "volcano" and body["spec"]["restartPolicy"] == "Never"
    assert "status" not in job or job["status"]["version"] == 2, "the job is not modified"


def test_env_plugin_sets_the_index_on_every_container_and_init_container() -> None:
    job = jobs.tf()
    job["spec"]["tasks"][0]["template"]["spec"]["initContainers"] = [{"name": "init", "image": "busybox"}]
    body = pods.build(job, task="ps", index=0)
    for c in [*body["spec"]["initContainers"], *body["spec"]["containers"]]:
        env = {e["name"]: e for e in c["env"]}
        assert env["VK_TASK_INDEX"]["value"] == "0" and env["VC_TASK_INDEX"]["value"] == "0"


def test_svc_plugin_hosts_files_env_and_dns_identity() -> None:
    job = jobs.tf()
    job["spec"]["tasks"][1]["name"] = "worker-gpu"
    service, config, policy = plugins.objects(job, None)
    assert service["metadata"]["name"] == "tensorflow-dist-mnist" and service["spec"]["clusterIP"] == "None"
    assert policy["kind"] == "NetworkPolicy" and policy["metadata"]["name"] == "tensorflow-dist-mnist"
    assert config["metadata"]["name"] == "tensorflow-dist-mnist-svc"
    assert config["data"] == {
        "ps.host": "tensorflow-dist-mnist-ps-0.tensorflow-dist-mnist",
        "VC_PS_HOSTS": "tensorflow-dist-mnist-ps-0.tensorflow-dist-mnist",
        "VC_PS_NUM": "1",
        "worker_gpu.host": "tensorflow-dist-mnist-worker-gpu-0.tensorflow-dist-mnist\n"
        "tensorflow-dist-mnist-worker-gpu-1.tensorflow-dist-mnist",
        "VC_WORKER_GPU_HOSTS": "tensorflow-dist-mnist-worker-gpu-0.tensorflow-dist-mnist,"
        "tensorflow-dist-mnist-worker-gpu-1.tensorflow-dist-mnist",
        "VC_WORKER_GPU_NUM": "2",
    }
    body = pods.build(job, task="worker-gpu", index=0)
    assert (body["spec"]["hostname"], body["spec"]["subdomain"]) == (
        "tensorflow-dist-mnist-worker-gpu-0",
        "tensorflow-dist-mnist",
    )
    container = body["spec"]["containers"][0]
    assert {"name": "tensorflow-dist-mnist-svc", "mountPath": "/etc/volcano"} in container["volumeMounts"]
    names = {e["name"] for e in container["env"]}
    assert {"VC_PS_HOSTS", "VC_PS_NUM", "VC_WORKER_GPU_HOSTS", "VC_WORKER_GPU_NUM"} <= names


def test_ssh_plugin_secret_config_and_private_mount() -> None:
    job = jobs.mpi()
    secret = next(o for o in plugins.objects(job, KEYS) if o["kind"] == "Secret")
    assert secret["metadata"]["name"] == "lm-mpi-job-ssh"
    data = secret["stringData"]
    assert data["authorized_keys"] == data["id_rsa.pub"] == KEYS.public_openssh
    assert data["config"].splitlines()[:5] == [
        "StrictHostKeyChecking no",
        "UserKnownHostsFile /dev/null",
        "Host lm-mpi-job-mpimaster-0",
        "  HostName lm-mpi-job-mpimaster-0.lm-mpi-job",
        "  Port 22",
    ]
    assert data["config"].count("Host ") == 3
    body = pods.build(job, task="mpiworker", index=1)
    volume = next(v for v in body["spec"]["volumes"] if v["name"] == "lm-mpi-job-ssh")
    assert volume["secret"]["defaultMode"] == 0o600
    mount = next(m for m in body["spec"]["containers"][0]["volumeMounts"] if m["name"] == "lm-mpi-job-ssh")
    assert mount == {"name": "lm-mpi-job-ssh", "mountPath": "/root/.ssh", "subPath": ".ssh"}
    assert "env" not in body["spec"]["containers"][0] or all(
        e["name"] not in ("VK_TASK_INDEX",) for e in body["spec"]["containers"][0]["env"]
    ), "env plugin not enabled on the MPI seed"


def test_no_ssh_secret_without_key_material() -> None:
    assert [o["kind"] for o in plugins.objects(jobs.mpi(), None)] == ["Service", "ConfigMap", "NetworkPolicy"]
