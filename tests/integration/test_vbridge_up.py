"""`vbridge up`: the README's run command brings up a usable cluster and stops cleanly on Ctrl-C.

Each test runs on both backends (``--backend volcano``: our scheduler binds the gangs;
``--backend native``: the control plane serves the Workload API, kube-scheduler 1.37 binds them
as ``default-scheduler`` once our scheduler lifted the queue gate), each on its own control plane.
The seeds are the same; what differs is asserted by ``BINDER`` and ``_bound_by``.
"""

from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bridge import keys
from tests.support import apiserver, operator_env
from vbridge import embedded
from vbridge.localcluster import binaries

pytestmark = pytest.mark.integration
BACKENDS = ("volcano", "native")
# Who binds the seeds' pods: their schedulerName, and the reporter of their Scheduled events.
BINDER = {"volcano": "volcano", "native": "default-scheduler"}
REPORTER = {"volcano": "volcano-bridge", "native": "default-scheduler"}
# What `up` says once the placing half runs.
RUNNING = {"volcano": "gang scheduler running", "native": "backend native: kube-scheduler places the gangs"}


def _procs_mentioning(text: str) -> list[int]:
    """Processes with ``text`` in their command line or environment (the operators carry the
    workdir only in theirs: ``KUBECONFIG``)."""
    found = []
    needle = text.encode()
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if any(needle in (entry / part).read_bytes() for part in ("cmdline", "environ")):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _bound_by(api: k8s.ApiClient, backend: str, pods: list[dict[str, Any]]) -> None:
    """Every pod of ``pods`` was bound by the backend's binder to a simulated node; on native each
    joined its native PodGroup and our queue gate is gone (kube-scheduler never binds a gated pod)."""
    events = k8s.CoreV1Api(api).list_namespaced_event("seed", field_selector="reason=Scheduled").items
    reporters = {e.involved_object.name: e.reporting_component or (e.source and e.source.component) for e in events}
    for pod in pods:
        name, spec = pod["metadata"]["name"], pod["spec"]
        assert spec["schedulerName"] == BINDER[backend] and str(spec.get("nodeName")).startswith("sim-node-"), name
        assert reporters.get(name) == REPORTER[backend], (name, reporters.get(name))
        if backend == "native":
            assert spec["schedulingGroup"]["podGroupName"], name
            assert keys.QUEUE_GATE not in [g["name"] for g in spec.get("schedulingGates") or []], name


@pytest.mark.timeout(300)  # a whole control plane, the bridge and the seeds; ~90 s on 2 busy cores
@pytest.mark.parametrize("backend", BACKENDS)
def test_up_runs_until_interrupted_and_leaves_nothing_behind(
    tmp_path: pathlib.Path, bins: binaries.Binaries, backend: str
) -> None:
    workdir = tmp_path / "up"
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vbridge.cli",
            "up",
            "--nodes",
            "3",
            "--node-gpus",
            "1",
            "--workdir",
            str(workdir),
            "--run-seconds",
            "8",  # long enough for the 3-second tables to show the Volcano Jobs' PodGroups Running
            "--backend",
            backend,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        seen: list[str] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "vbridge up exited early:\n" + "".join(seen)
            seen.append(line)
            if "MPIJob seed/tensorflow-mnist" in line:  # the last seed example
                break
        out = "".join(seen)
        assert "control plane ready in" in out and f"kubeconfig: {workdir / 'kubeconfig'}" in out
        assert "admission webhook on https://127.0.0.1:" in out and RUNNING[backend] in out
        nodes = subprocess.run(
            [str(bins.path("kubectl")), f"--kubeconfig={workdir / 'kubeconfig'}", "get", "nodes", "--no-headers"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        assert sorted(n.split()[0] for n in nodes) == ["sim-node-0", "sim-node-1", "sim-node-2"]
        assert all(n.split()[1] == "Ready" for n in nodes)
        assert "created SparkApplication seed/spark-pi" in out and "created TFJob seed/example-job" in out

        def groups() -> set[str]:
            listed = subprocess.run(
                [
                    str(bins.path("kubectl")),
                    f"--kubeconfig={workdir / 'kubeconfig'}",
                    "get",
                    "pg",
                    "-n",
                    "seed",
                    "-o",
                    "custom-columns=NAME:.metadata.name",
                    "--no-headers",
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            return set(listed)

        apiserver.eventually(  # the reconcilers make the groups just after the jobs exist
            lambda: {"spark-spark-pi-pg", "example-job", "tensorflow-mnist"} <= groups(),
            timeout=30,
            what="the seed jobs' PodGroups",
        )
        assert _procs_mentioning(str(workdir))  # etcd, apiserver, controller manager are up
        # The two seed Volcano Jobs run to completion on the simulated nodes, and `up` says so.
        # Not a tty: one timestamped line per change ("12:00:03  Job seed/lm-mpi-job: phase Completed, ..."),
        # never the whole table again.
        finished: set[str] = set()
        changes: list[str] = []
        notes: list[str] = []
        deadline = time.monotonic() + 90
        while finished != {"seed/lm-mpi-job", "seed/tensorflow-dist-mnist"} and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "vbridge up exited early"
            if re.match(r"\d\d:\d\d:\d\d  note: ", line):
                notes.append(line.split("  ", 1)[1])
            found = re.match(r"\d\d:\d\d:\d\d  (\w+) (\S+): (.*)$", line)
            if found:
                changes.append(line)
                kind, name, fields = found.groups()
                if kind == "Job" and fields.startswith("phase Completed,"):
                    finished.add(name)
        assert finished == {"seed/lm-mpi-job", "seed/tensorflow-dist-mnist"}
        # Each ran as a gang: its PodGroup (named after the job) went Running with all 3 members.
        for job in ("lm-mpi-job", "tensorflow-dist-mnist"):
            assert any(
                re.search(rf"PodGroup seed/{job}-[0-9a-f-]+: phase Running, minmember 3, running 3,", c)
                for c in changes
            ), (job, changes)
        api = k8s_config.new_client_from_config(config_file=str(workdir / "kubeconfig"))
        try:
            seeds = [p for p in apiserver.pods(api, "seed", "") if p["metadata"]["name"].startswith(("lm-", "tensor"))]
            assert len(seeds) >= 4, [p["metadata"]["name"] for p in seeds]  # ps, 2 workers, the master
            _bound_by(api, backend, seeds)
        finally:
            api.close()
        # The notes follow the tables of the same moment: read on to them.
        while not any("TFJob" in n for n in notes) and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "vbridge up exited early"
            if re.match(r"\d\d:\d\d:\d\d  note: ", line):
                notes.append(line.split("  ", 1)[1])
        assert len(changes) == len(set(changes))  # each line a change, not a reprint
        # No operator runs here: the TFJob's pods never come, and up says who would make them, once.
        assert [n for n in notes if "TFJob" in n] == [
            "note: 1 TFJob(s) without status: their PodGroups wait for pods only the training-operator creates; "
            "is it running? (`vbridge up --with-operators` runs it locally)\n"
        ]
        assert (workdir / "logs" / "vbridge.log").stat().st_size > 0  # the bridge's own logs, in the printed folder
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130  # ended by SIGINT, as a shell reports it
    assert _procs_mentioning(str(workdir)) == []


def _wait_for_output(out: pathlib.Path, proc: subprocess.Popen[bytes], text: str, timeout: float) -> str:
    """The output so far, once the regular expression ``text`` matches it; fails if ``vbridge up`` exits first."""

    def matched() -> str | None:
        seen = out.read_text()
        if re.search(text, seen):
            return seen
        if proc.poll() is not None:
            pytest.fail(f"vbridge up exited ({proc.returncode}) early:\n{seen[-5000:]}")
        return None

    try:
        return apiserver.eventually(matched, timeout, f"{text!r} from vbridge up")
    except AssertionError as exc:
        raise AssertionError(f"{exc}:\n{out.read_text()[-5000:]}") from None


def _succeeded(obj: dict[str, Any]) -> bool:
    conds = (obj.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Succeeded" and c["status"] == "True" for c in conds)


# The seed jobs the operators run: (group, version, plural, name), and the PodGroup the bridge makes.
SEED_JOBS = {
    ("sparkoperator.k8s.io", "v1beta2", "sparkapplications", "spark-pi"): "spark-spark-pi-pg",
    ("kubeflow.org", "v1", "tfjobs", "example-job"): "example-job",
    ("kubeflow.org", "v1", "mpijobs", "tensorflow-mnist"): "tensorflow-mnist",
}


@pytest.mark.operators
@pytest.mark.timeout(420)
@pytest.mark.parametrize("backend", BACKENDS)
def test_up_with_operators_runs_the_seed_spark_tf_and_mpi_jobs_to_completion(
    tmp_path: pathlib.Path, bins: binaries.Binaries, backend: str
) -> None:
    for name in embedded.WITH_OPERATORS:
        operator_env.operator_binary(name)  # skipped when not built, failed under CI=true
    operator_env.spark_home()  # the spark-operator runs pyspark's spark-submit
    workdir = tmp_path / "up"
    out = tmp_path / "up.out"
    argv = [sys.executable, "-m", "vbridge.cli", "up", "--with-operators", "--run-seconds", "2", "--backend", backend]
    with out.open("w") as sink, subprocess.Popen([*argv, "--workdir", str(workdir)], stdout=sink, stderr=sink) as proc:
        try:
            seen = _wait_for_output(out, proc, RUNNING[backend], timeout=180)
            [kubeconfig] = [line.split(":", 1)[1].strip() for line in seen.splitlines() if "kubeconfig:" in line]
            _wait_for_output(out, proc, "created MPIJob seed/tensorflow-mnist", timeout=60)
            _check_seed_jobs(kubeconfig, out, workdir, backend)
            # ...and `up` says so, in its table of the operators' jobs.
            for pattern in (
                r"SparkApplication seed/spark-pi: state COMPLETED",
                r"TFJob seed/example-job: state Succeeded",
                r"MPIJob seed/tensorflow-mnist: state Succeeded",
            ):
                _wait_for_output(out, proc, pattern, timeout=15)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                code = proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise
        assert code == 130, out.read_text()[-3000:]  # ended by SIGINT
    text = out.read_text()
    assert "bind of" not in text, text  # no failed binds (gated drivers are not bound)
    assert "stopping..." in text
    assert "without status" not in text  # the operators run: no hint that they do not
    assert (workdir / "logs" / "vbridge.log").stat().st_size > 0  # the bridge's own logs, in the printed folder
    assert _procs_mentioning(str(workdir)) == []  # operators, control plane: all gone


def _check_seed_jobs(kubeconfig: str, out: pathlib.Path, workdir: pathlib.Path, backend: str) -> None:
    api = k8s_config.new_client_from_config(config_file=kubeconfig)
    custom, core = k8s.CustomObjectsApi(api), k8s.CoreV1Api(api)

    def logs() -> str:
        tails = [out.read_text()[-3000:]]
        for name in embedded.WITH_OPERATORS:
            log = workdir / name / f"{name}.log"
            tails.append(f"--- {name}\n" + "\n".join(log.read_text().splitlines()[-20:]) if log.exists() else "")
        return "\n".join(tails)

    def finished() -> bool:
        for (group, version, plural, name), _ in SEED_JOBS.items():
            obj: dict[str, Any] = custom.get_namespaced_custom_object(group, version, "seed", plural, name)
            if plural == "sparkapplications":
                if ((obj.get("status") or {}).get("applicationState") or {}).get("state") != "COMPLETED":
                    return False
            elif not _succeeded(obj):
                return False
        return True

    def groups_released() -> bool:
        """Each job's PodGroup is Completed, or was deleted by the bridge when the job finished."""
        for (_, _, _, name), pg_name in SEED_JOBS.items():
            events = core.list_namespaced_event("seed", field_selector=f"involvedObject.name={name}").items
            reasons = {str(e.reason) for e in events}
            assert "PodGroupCreated" in reasons, f"{name}: no PodGroupCreated event ({sorted(reasons)})"
            try:
                pg: dict[str, Any] = custom.get_namespaced_custom_object(*apiserver.PG, "seed", "podgroups", pg_name)
            except k8s.ApiException as exc:
                if exc.status != 404 or "PodGroupDeleted" not in reasons:
                    return False
                continue
            if (pg.get("status") or {}).get("phase") != "Completed":
                return False
        return True

    try:
        try:
            apiserver.eventually(finished, timeout=180, what="the seed SparkApplication, TFJob and MPIJob to finish")
            apiserver.eventually(groups_released, timeout=30, what="their PodGroups to be completed or collected")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{logs()}") from None
        jobs = tuple(name for (_, _, _, name) in SEED_JOBS)
        ours = [p for p in apiserver.pods(api, "seed", "") if p["metadata"]["name"].startswith(jobs)]
        # driver; TFJob master, worker, 2 ps; MPIJob launcher and the workers its cleanPodPolicy kept
        assert len(ours) >= 6, [p["metadata"]["name"] for p in ours]
        assert all(p["status"]["phase"] == "Succeeded" for p in ours), [p["metadata"]["name"] for p in ours]
        _bound_by(api, backend, ours)
    finally:
        api.close()
