"""tensorflow, pytorch, mpi and svc's flags: the values Volcano's own unit tests expect, and its argument rules."""

from __future__ import annotations

from typing import Any

import pytest

from bridge import errors
from bridge.adapters.vcjob import flags, frameworks, pods, spec


def job(name: str, *tasks: tuple[str, int], plugins: dict[str, Any] | None = None, **template: Any) -> dict[str, Any]:
    body = {
        "metadata": {"name": name, "namespace": "team-a", "uid": "u-1"},
        "spec": {
            "plugins": plugins or {},
            "tasks": [
                {"name": t, "replicas": n, "template": {"spec": {"containers": [{"name": "main"}], **template}}}
                for t, n in tasks
            ],
        },
    }
    return spec.defaulted(body)


# tensorflow_test.go: train-123 with 2 ps, 2 workers, 1 chief and --port=5000.
TRAIN = (
    '{"cluster":{"ps":["train-123-ps-0.train-123:5000","train-123-ps-1.train-123:5000"],'
    '"worker":["train-123-worker-0.train-123:5000","train-123-worker-1.train-123:5000"],'
    '"chief":["train-123-chief-0.train-123:5000"]},"task":{"type":"%s","index":0}}'
)


@pytest.mark.parametrize("task", ["ps", "worker", "chief"])
def test_tf_config_is_volcanos_word_for_word(task: str) -> None:
    train = job("train-123", ("ps", 2), ("worker", 2), ("chief", 1))
    assert frameworks.tf_config(train, task, 0, ["--port=5000"]) == TRAIN % task


def test_tf_config_roles_by_argument_and_the_stand_alone_job() -> None:
    renamed = job("mnist", ("server", 1), ("trainer", 2), ("eval", 0))
    value = frameworks.tf_config(renamed, "trainer", 1, ["-ps=server", "--worker", "trainer", "--evaluator=eval"])
    assert value == (
        '{"cluster":{"ps":["mnist-server-0.mnist:2222"],"worker":["mnist-trainer-0.mnist:2222",'
        '"mnist-trainer-1.mnist:2222"]},"task":{"type":"worker","index":1}}'
    ), "default port 2222; a role with no replicas is left out"
    assert '"task":{"type":"other","index":0}' in str(
        frameworks.tf_config(job("j", ("ps", 1), ("other", 1)), "other", 0)
    )
    assert frameworks.tf_config(job("solo", ("worker", 1)), "worker", 0) is None


def test_pytorch_env_as_volcanos_tests_expect() -> None:
    three = job("test-pytorch", ("master", 1), ("worker", 2), ("extra", 2))
    common = [
        {"name": "MASTER_ADDR", "value": "test-pytorch-master-0.test-pytorch"},
        {"name": "MASTER_PORT", "value": "23456"},
        {"name": "WORLD_SIZE", "value": "3"},
    ]
    assert frameworks.pytorch_env(three, "master", 0) == [*common, {"name": "RANK", "value": "0"}]
    assert frameworks.pytorch_env(three, "worker", 0) == [*common, {"name": "RANK", "value": "1"}]
    assert frameworks.pytorch_env(three, "worker", 1) == [*common, {"name": "RANK", "value": "2"}]
    assert frameworks.pytorch_env(three, "extra", 1) == common, "a task of neither role gets no RANK"
    assert frameworks.pytorch_env(job("test-pytorch", ("worker", 1)), "worker", 0) is None, "no master: nothing"
    named = job("pt", ("master", 1), ("worker", 1), hostname="head", subdomain="net")
    assert frameworks.pytorch_env(named, "worker", 0, ["--port=5000"])[:2] == [  # type: ignore[index]
        {"name": "MASTER_ADDR", "value": "head.net"},
        {"name": "MASTER_PORT", "value": "5000"},
    ]


def test_pytorch_pod_gets_the_port_and_a_worker_the_wait_for_master_init_container() -> None:
    pt = job("pt", ("master", 1), ("worker", 1), plugins={"pytorch": ["--wait-master-enabled", "--port=29500"]})
    worker = pods.build(pt, task="worker", index=0)
    init = worker["spec"]["initContainers"][0]
    assert (init["name"], init["image"], init["command"][:2]) == ("wait-for-master", "busybox:1.36.1", ["sh", "-c"])
    assert init["command"][2] == frameworks.wait_for_master_script("pt-master-0.pt", 29500, 300)
    assert init["command"][2].splitlines()[:4] == [
        'echo "Waiting for master node pt-master-0.pt:29500 to be ready..."',
        "TIMEOUT=300",
        "ELAPSED=0",
        "until { nc -z pt-master-0.pt 29500 || echo > /dev/tcp/pt-master-0.pt/29500; } 2>/dev/null; do",
    ]
    assert worker["spec"]["containers"][0]["ports"] == [{"name": "pytorchjob-port", "containerPort": 29500}]
    master = pods.build(pt, task="master", index=0)
    assert "initContainers" not in master["spec"], "only workers wait for the master"


def test_mpi_hosts_and_ports_as_volcanos_tests_expect() -> None:
    valid = job("test-mpi-valid-worker", ("master", 1), ("worker", 2), plugins={"mpi": []})
    assert frameworks.mpi_hosts(valid) == (
        "test-mpi-valid-worker-worker-0.test-mpi-valid-worker,test-mpi-valid-worker-worker-1.test-mpi-valid-worker"
    )
    master = pods.build(valid, task="master", index=0)
    env = {e["name"]: e.get("value") for e in master["spec"]["containers"][0]["env"]}
    assert env["MPI_HOST"] == frameworks.mpi_hosts(valid)
    assert master["spec"]["containers"][0]["ports"] == [{"name": "mpijob-port", "containerPort": 22}]
    worker = pods.build(valid, task="worker", index=1)
    assert "MPI_HOST" not in {e["name"] for e in worker["spec"]["containers"][0]["env"]}
    assert frameworks.mpi_hosts(job("test-mpi-zero-worker", ("master", 1), ("worker", 0))) == ""
    assert frameworks.mpi_hosts(job("test-mpi-no-worker", ("master", 1))) is None
    lone = pods.build(job("j", ("master", 1), plugins={"mpi": []}), task="master", index=0)
    assert "ports" not in lone["spec"]["containers"][0], "a master without workers is left alone"
    fixed = job("j", ("launcher", 1), ("w", 3), hostname="only")
    assert frameworks.mpi_hosts(fixed, ["--master=launcher", "--worker=w"]) == "only.j", "a named host is one host"
    ported = job("j", ("master", 1), ("worker", 1), plugins={"mpi": ["--port=5000"]}, initContainers=[{"name": "i"}])
    body = pods.build(ported, task="master", index=0)
    assert body["spec"]["initContainers"][0]["ports"] == [{"name": "mpijob-port", "containerPort": 5000}]
    assert {"name": "MPI_HOST", "value": "j-worker-0.j"} in body["spec"]["initContainers"][0]["env"]


def test_the_users_own_variable_is_kept() -> None:
    tf = job("j", ("ps", 1), ("worker", 1), plugins={"tensorflow": []})
    tf["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"] = [{"name": "TF_CONFIG", "value": "mine"}]
    env = pods.build(tf, task="ps", index=0)["spec"]["containers"][0]["env"]
    assert [e for e in env if e["name"] == "TF_CONFIG"] == [{"name": "TF_CONFIG", "value": "mine"}]


def test_flags_are_read_as_gos_flag_package_reads_them() -> None:
    assert flags.parse("pytorch", None)["port"] == 23456
    parsed = flags.parse("pytorch", ["-master", "head", "--port", "7", "--wait-master-enabled", "--"])
    assert (parsed["master"], parsed["port"], parsed["wait-master-enabled"]) == ("head", 7, True)
    assert flags.parse("svc", ["--publish-not-ready-addresses=F"])["publish-not-ready-addresses"] is False


@pytest.mark.parametrize(
    ("plugin", "args", "message"),
    [
        ("mpi", ["--masters=a"], "plugin 'mpi': unknown argument --masters; known: --master, --worker, --port"),
        ("mpi", ["--port=ssh"], "invalid value 'ssh' for --port: use a whole number"),
        ("pytorch", ["--master"], "plugin 'pytorch': --master needs a value"),
        ("tensorflow", ["ps"], "argument 'ps' is not a flag; write --name=value"),
        ("svc", "--disable-network-policy", "arguments must be a list of strings"),
        ("svc", ["--", "--inject-hosts-env=false"], "arguments after '--' (--inject-hosts-env=false) are not read"),
    ],
)
def test_bad_arguments_are_refused_naming_the_argument(plugin: str, args: Any, message: str) -> None:
    with pytest.raises(errors.InvalidObjectError) as exc:
        flags.parse(plugin, args)
    assert message in str(exc.value)
