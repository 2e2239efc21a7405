"""`vbridge up`: the README's run command brings up a usable cluster and stops cleanly on Ctrl-C."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from bridge.localcluster import binaries

pytestmark = pytest.mark.integration


def _procs_mentioning(text: str) -> list[int]:
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_up_runs_until_interrupted_and_leaves_nothing_behind(tmp_path: pathlib.Path, bins: binaries.Binaries) -> None:
    workdir = tmp_path / "up"
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bridge.cli",
            "up",
            "--nodes",
            "3",
            "--node-gpus",
            "1",
            "--workdir",
            str(workdir),
            "--run-seconds",
            "3",
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
        assert "admission webhook on https://127.0.0.1:" in out and "gang scheduler running" in out
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

        deadline = time.monotonic() + 30  # the reconcilers make the groups just after the jobs exist
        while not {"spark-spark-pi-pg", "example-job", "tensorflow-mnist"} <= groups() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert {"spark-spark-pi-pg", "example-job", "tensorflow-mnist"} <= groups()
        assert _procs_mentioning(str(workdir))  # etcd, apiserver, controller manager are up
        # The two seed Volcano Jobs run to completion on the simulated nodes, and `up` says so.
        finished: set[str] = set()
        deadline = time.monotonic() + 90
        while finished != {"seed/lm-mpi-job", "seed/tensorflow-dist-mnist"} and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "vbridge up exited early"
            fields = line.split()
            if (
                len(fields) >= 2
                and fields[0] in ("seed/lm-mpi-job", "seed/tensorflow-dist-mnist")
                and (fields[1] == "Completed")
            ):
                finished.add(fields[0])
        assert finished == {"seed/lm-mpi-job", "seed/tensorflow-dist-mnist"}
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    assert _procs_mentioning(str(workdir)) == []
