"""The contenders of ``bench/scheduler_compare.py``: how each is started, and one timed run of one of them."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from typing import Any

import yaml

from bridge import errors
from bridge.k8s import client, kubeconfigs, paths
from compare import workloads
from scheduler.api import plan
from scheduler.io import binder
from vbridge.localcluster import binaries, cluster, processes, volcano

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Far above what this apiserver serves, so neither Go scheduler waits on its client rate limiter.
GO_QPS = 5000
# native: kube-scheduler 1.37's own gangs (Workload API, GenericWorkload gate) on the same gangs.
CONTENDERS = ("ours", "kube", "native", "volcano", "ceiling")
# `vbridge scheduler` with Volcano's default conf, but its client's connection count from argv.
OURS_WITH_CONNECTIONS = """\
import asyncio, pathlib, sys
from bridge.k8s import client, kubeconfigs
from scheduler import configure
from scheduler.io import loop
async def main():
    conn = kubeconfigs.load(pathlib.Path(sys.argv[1]))
    async with client.Client(conn, connections=int(sys.argv[2])) as api:
        await loop.Scheduler(api, configure.parse("", scheduler_name="volcano")).run()
asyncio.run(main())
"""
VOLCANO_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


@dataclasses.dataclass
class Result:
    contender: str
    workload: str
    pods: int
    bound: int = 0
    create_seconds: float = 0.0  # PodGroups + pods, before the contender starts
    seconds: float = 0.0  # contender start → last pod seen bound
    first_bind: float = 0.0  # contender start → first pod seen bound
    error: str = ""

    @property
    def rate(self) -> float:
        return self.bound / self.seconds if self.seconds and not self.error else 0.0


def volcano_dir(build: bool) -> tuple[pathlib.Path | None, str]:
    """The folder tools/build-volcano.sh prints (building unless a warm cache has it), or why not."""
    t0 = time.perf_counter()
    try:
        folder = volcano.find(build=build)
    except errors.BinaryMissingError as exc:
        return None, str(exc)
    took = time.perf_counter() - t0
    if took > 5:
        print(f"volcano: built in {took:.0f} s", flush=True)
    return folder, ""


def start_process(
    contender: str,
    lc: cluster.LocalCluster,
    bins: binaries.Binaries,
    vdir: pathlib.Path | None,
    metrics_port: int | None = None,
) -> processes.Process:
    """The contender as a child process; with ``metrics_port`` ours and Volcano (``--enable-metrics``)
    serve /metrics there."""
    logs = lc.workdir / "logs"
    volcano_metrics = ["--enable-metrics"] if metrics_port else []
    metrics_port = metrics_port or cluster.free_port()
    if contender == "ours":
        argv = [sys.executable, "-m", "vbridge.cli", "scheduler", f"--kubeconfig={lc.kubeconfig}", "--verbose"]
        argv.append(f"--metrics-port={metrics_port}")
    elif contender.startswith("ours@"):
        # What-if: the same scheduler over a client with N connections instead of 64.
        argv = [sys.executable, "-c", OURS_WITH_CONNECTIONS, str(lc.kubeconfig), contender.partition("@")[2]]
    elif contender in ("kube", "native"):
        conf = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(lc.kubeconfig), "qps": GO_QPS, "burst": GO_QPS},
            "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": "default-scheduler"}],
        }
        path = lc.workdir / "kube-scheduler.yaml"
        path.write_text(yaml.safe_dump(conf))
        argv = [str(bins.path("kube-scheduler")), f"--config={path}", "--secure-port=0", "-v=1"]
        if contender == "native":
            argv.append(cluster.NATIVE_GATES)
    else:
        assert vdir is not None
        path = lc.workdir / "volcano-scheduler.conf"
        path.write_text(VOLCANO_CONF)
        argv = [
            str(vdir / "vc-scheduler"),
            f"--kubeconfig={lc.kubeconfig}",
            f"--scheduler-conf={path}",
            "--scheduler-name=volcano",
            "--leader-elect=false",
            f"--kube-api-qps={GO_QPS}",
            f"--kube-api-burst={GO_QPS}",
            f"--healthz-address=127.0.0.1:{cluster.free_port()}",
            f"--listen-address=127.0.0.1:{metrics_port}",
            "--cache-dumper=false",
            *volcano_metrics,
            "-v=1",
        ]
    proc = processes.Process(contender, argv, log=logs / f"{contender}.log")
    proc.start()
    return proc


def start_profiler(proc: processes.Process, out: pathlib.Path) -> subprocess.Popen[bytes] | None:
    """py-spy sampling our scheduler (all threads: the core runs in a worker thread); ends with it."""
    spy = shutil.which("py-spy", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None or proc.pid is None:
        print("profile: py-spy not found (.venv/bin/pip install py-spy)", flush=True)
        return None
    argv = [spy, "record", "--pid", str(proc.pid), "--rate", "200", "--format", "raw", "--nonblocking", "-o", str(out)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def ceiling(lc: cluster.LocalCluster, uids: dict[str, str], node_names: list[str], connections: int) -> None:
    """Our binder's requests (same body, UID precondition, client, concurrency) and nothing else."""
    names = list(uids)
    async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=connections) as api:

        async def bind(i: int) -> None:
            op = plan.Allocate(f"{workloads.NS}/{names[i]}", uids[names[i]], node_names[i % len(node_names)])
            path = paths.resource("v1", "pods", namespace=workloads.NS, name=names[i], subresource="binding")
            await api.request("POST", path, body=binder.binding(op))

        await workloads.gather(len(names), bind, connections)


async def run(
    contender: str,
    work: workloads.Workload,
    lc: cluster.LocalCluster,
    args: argparse.Namespace,
    bins: binaries.Binaries,
    vdir: pathlib.Path | None,
) -> Result:
    result = Result(contender, work.name, work.pods)
    async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=workloads.SETUP_CONNECTIONS) as api:
        specs = work.nodes(args.nodes)
        await workloads.prepare_nodes(api, specs)
        t0 = time.perf_counter()
        gangs = contender != "kube"
        scheduler_name = "default-scheduler" if contender in ("kube", "native") else "volcano"
        if contender.startswith("ceiling"):
            scheduler_name = "nobody"
        native = contender == "native"
        uids = await workloads.populate(api, work, gangs=gangs, scheduler_name=scheduler_name, native=native)
        result.create_seconds = time.perf_counter() - t0
        gc.collect()
        gc.freeze()  # the setup's objects: no collection rescans them while the tracker (and ceiling) run

        tracker = workloads.Tracker(work.pods)
        follow = asyncio.create_task(tracker.follow(api))
        await tracker.synced.wait()
        proc: processes.Process | None = None
        spy: subprocess.Popen[bytes] | None = None
        start = time.perf_counter()
        try:
            if contender.startswith("ceiling"):
                # ceiling@N: the same binds over N connections, to show what the client's pool costs.
                _, _, n = contender.partition("@")
                await ceiling(lc, uids, [s.name for s in specs], int(n) if n else args.ceiling_connections)
            else:
                proc = start_process(contender, lc, bins, vdir)
                if contender.startswith("ours") and args.profile:
                    spy = start_profiler(proc, args.profile / f"{contender}-{work.name}.raw")
            deadline = start + args.timeout
            while not tracker.done.is_set():
                if proc is not None and not proc.alive():
                    result.error = f"{contender} exited: {(proc.tail(3).strip().splitlines() or [''])[-1]}"
                    break
                if time.perf_counter() > deadline:
                    result.error = f"timeout after {args.timeout:.0f} s"
                    break
                if follow.done():
                    follow.result()  # the watch failed: raise its error
                await asyncio.sleep(0.2)
        finally:
            if proc is not None:
                proc.stop()
            if spy is not None:
                spy.wait(30)  # py-spy writes its file once the target exited
            follow.cancel()
            await asyncio.gather(follow, return_exceptions=True)
        result.bound = len(tracker.bound)
        if tracker.bound:
            result.seconds = tracker.last - start
            result.first_bind = tracker.first - start
        if result.error and tracker.bound:
            result.seconds = time.perf_counter() - start
        if proc is not None and args.verbose:
            print(proc.tail(10), flush=True)
    return result


def run_one(
    contender: str,
    work: workloads.Workload,
    args: argparse.Namespace,
    bins: binaries.Binaries,
    vdir: pathlib.Path | None,
) -> Result:
    # Volcano reads its own CRDs (hypernodes, numatopologies, ...); its PodGroup and Queue CRDs
    # replace ours, which LocalCluster installs first.
    crds = tuple(sorted((vdir / "crds").glob("*.yaml"))) if contender == "volcano" and vdir else ()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix=f"vbridge-cmp-{contender}-"))
    try:
        with cluster.LocalCluster(workdir, bins=bins, extra_crds=crds, native_gangs=contender == "native") as lc:
            result = asyncio.run(run(contender, work, lc, args, bins, vdir))
            if result.error and args.keep_logs:
                print(f"  logs kept in {workdir / 'logs'}", flush=True)
    except (errors.BridgeError, OSError) as exc:
        result = Result(contender, work.name, work.pods, error=f"{type(exc).__name__}: {exc}")
    if not (result.error and args.keep_logs):
        shutil.rmtree(workdir, ignore_errors=True)
    return result


def median(runs: list[Result]) -> Result:
    """The run with the median rate (of an even count, the lower middle); a failed run ranks 0."""
    return sorted(runs, key=lambda r: r.rate)[(len(runs) - 1) // 2]


def in_fresh_cluster(
    contender: str,
    vdir: pathlib.Path | None,
    bins: binaries.Binaries,
    body: Callable[[cluster.LocalCluster], Coroutine[Any, Any, None]],
    *,
    audited: bool = False,
) -> str:
    """``body`` run on a fresh control plane of its own (with Volcano's CRDs for ``volcano``; with
    ``audited``, every request's metadata in its ``audit_log``), removed afterwards; '' or the
    error that ended it."""
    crds = tuple(sorted((vdir / "crds").glob("*.yaml"))) if contender == "volcano" and vdir else ()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix=f"vbridge-bench-{contender}-"))
    rules: tuple[dict[str, Any], ...] = ({"level": "Metadata"},) if audited else ()
    try:
        with cluster.LocalCluster(workdir, bins=bins, extra_crds=crds, audit_rules=rules) as lc:
            asyncio.run(body(lc))
    except (errors.BridgeError, OSError) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return ""
