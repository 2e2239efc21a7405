"""Scheduler comparison: pods bound per second by ours, kube-scheduler, Volcano's scheduler, and the bind ceiling.

One command, one run on this machine. Every (contender, workload) pair gets a fresh local control
plane (same kube-apiserver/etcd build) with the same simulated nodes (registered Ready, no pod
simulation: binding needs no kubelet), so runs cannot interfere. All PodGroups and pods are
created first (timed separately); then the contender starts and a watch in this process times
until every pod has ``spec.nodeName``:

- ``ours``: ``vbridge scheduler`` as a subprocess (Volcano's default conf, like ``configure.parse("")``);
- ``kube``: kube-scheduler from our control-plane build, client QPS/burst raised so it is not
  throttled, no gangs (it has no PodGroup support, so the same pods without PodGroups);
- ``volcano``: Volcano's own vc-scheduler built by ``tools/build-volcano.sh``, with Volcano's CRDs
  and a conf of enqueue/allocate/backfill with gang/priority/predicates/proportion/nodeorder;
- ``ceiling``: placements computed in advance, ``pods/binding`` POSTed with our client at our
  binder's concurrency as fast as the apiserver takes them (``ceiling@N``, optional: the same
  over N connections, which shows what the client's connection pool costs; ``ours@N`` likewise
  runs our scheduler over a client with N connections).

Workloads: gangs (``--gangs`` PodGroups of minMember ``--gang-size``) and singles (``--singles``
pods, each in its own minMember-1 PodGroup), on ``--nodes`` nodes. Prints pods/s per contender and
the ratios against the issue-4 targets (with ``--repeat N``, N rounds of every contender, and
each pair's median run: this machine's runs vary by ±10 %): ours/Volcano ≥ 3×, ours/kube-scheduler ≥ 1.5×,
ours/ceiling ≥ 80 %. ``--profile DIR`` samples our scheduler with py-spy during its runs.

    .venv/bin/python bench/scheduler_compare.py [--small] [--repeat N] [--only ours,kube,volcano,ceiling]
        [--profile DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import gc
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

import yaml

from bridge import errors
from bridge.k8s import client, kubeconfigs, paths, watching
from scheduler.api import plan
from scheduler.io import binder
from vbridge.commands import scheduler as command
from vbridge.localcluster import binaries, cluster, processes
from vbridge.nodesim import nodes, simulator

ROOT = pathlib.Path(__file__).resolve().parents[1]
PG_API = "scheduling.volcano.sh/v1beta1"
NS = "bench"
CONCURRENCY = 64  # our binder's concurrency and client connections (vbridge scheduler uses 64)
# Setup (nodes, PodGroups, pods) is not what is measured: a few connections are enough.
SETUP_CONNECTIONS = 8
# Far above what this apiserver serves, so neither Go scheduler waits on its client rate limiter.
GO_QPS = 5000
CONTENDERS = ("ours", "kube", "volcano", "ceiling")
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


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    groups: tuple[tuple[str, int], ...]  # (PodGroup name, minMember = pods in it)

    @property
    def pods(self) -> int:
        return sum(size for _, size in self.groups)


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


# -- objects -------------------------------------------------------------------------------------


def _pod(name: str, group: str | None, scheduler_name: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if group is not None:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        },
    }


async def _gather(count: int, make: Any, concurrency: int = CONCURRENCY) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            await make(i)

    await asyncio.gather(*(one(i) for i in range(count)))


async def _prepare_nodes(api: client.Client, specs: list[nodes.NodeSpec]) -> None:
    await simulator.Simulator(api, specs, workers=SETUP_CONNECTIONS).register_nodes()

    async def untaint(i: int) -> None:  # nobody lifts TaintNodesByCondition's not-ready taint here
        path = paths.resource("v1", "nodes", name=specs[i].name)
        await api.request("PATCH", path, body={"spec": {"taints": None}}, content_type=client.MERGE)

    await _gather(len(specs), untaint, SETUP_CONNECTIONS)


async def _populate(api: client.Client, work: Workload, *, gangs: bool, scheduler_name: str) -> dict[str, str]:
    """Create the PodGroups (when the contender has gang semantics) and pods; pod name → UID."""
    await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": NS}})
    pg_path = paths.resource(PG_API, "podgroups", namespace=NS)
    pod_path = paths.resource("v1", "pods", namespace=NS)
    pods = [(f"{g}-{i}", g) for g, size in work.groups for i in range(size)]
    uids: dict[str, str] = {}

    async def make_pg(i: int) -> None:
        name, size = work.groups[i]
        body = {
            "apiVersion": PG_API,
            "kind": "PodGroup",
            "metadata": {"name": name},
            "spec": {"minMember": size, "queue": "default"},
        }
        await api.request("POST", pg_path, body=body)

    async def make_pod(i: int) -> None:
        name, group = pods[i]
        made = await api.request("POST", pod_path, body=_pod(name, group if gangs else None, scheduler_name))
        uids[name] = made["metadata"]["uid"]

    if gangs:
        await _gather(len(work.groups), make_pg, SETUP_CONNECTIONS)
    await _gather(len(pods), make_pod, SETUP_CONNECTIONS)
    return uids


# -- observation ---------------------------------------------------------------------------------


class Tracker:
    """Watches the bench namespace and records when each pod is first seen with spec.nodeName."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bound: set[str] = set()
        self.first = 0.0
        self.last = 0.0
        self.synced = asyncio.Event()
        self.done = asyncio.Event()
        self.per_node: collections.Counter[str] = collections.Counter()

    async def follow(self, api: client.Client) -> None:
        async for kind, pod in watching.watch(api, paths.resource("v1", "pods", namespace=NS)):
            if kind == "SYNCED":
                self.synced.set()
                continue
            node = (pod.get("spec") or {}).get("nodeName")
            name = pod["metadata"]["name"]
            if node and name not in self.bound:
                now = time.perf_counter()
                self.first = self.first or now
                self.last = now
                self.bound.add(name)
                self.per_node[node] += 1
                if len(self.bound) >= self.total:
                    self.done.set()


# -- contenders ----------------------------------------------------------------------------------


def _volcano_dir(build: bool) -> tuple[pathlib.Path | None, str]:
    """The folder tools/build-volcano.sh prints (building unless a warm cache has it), or why not."""
    env = dict(os.environ)
    if not build:
        env["VBRIDGE_NO_BUILD"] = "1"
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["bash", str(ROOT / "tools" / "build-volcano.sh")], capture_output=True, text=True, env=env, check=False
    )
    sys.stderr.write(proc.stderr[-4000:])
    for line in proc.stdout.splitlines():
        if line.startswith("volcano="):
            took = time.perf_counter() - t0
            if took > 5:
                print(f"volcano: built in {took:.0f} s", flush=True)
            return pathlib.Path(line.split("=", 1)[1]), ""
    tail = proc.stderr.strip().splitlines()[-3:]
    return None, f"tools/build-volcano.sh exit {proc.returncode}: {' | '.join(tail)}"


def _start_process(
    contender: str, lc: cluster.LocalCluster, bins: binaries.Binaries, vdir: pathlib.Path | None
) -> processes.Process:
    logs = lc.workdir / "logs"
    if contender == "ours":
        argv = [sys.executable, "-m", "vbridge.cli", "scheduler", f"--kubeconfig={lc.kubeconfig}", "--verbose"]
    elif contender.startswith("ours@"):
        # What-if: the same scheduler over a client with N connections instead of 64.
        argv = [sys.executable, "-c", OURS_WITH_CONNECTIONS, str(lc.kubeconfig), contender.partition("@")[2]]
    elif contender == "kube":
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
            f"--listen-address=127.0.0.1:{cluster.free_port()}",
            "--cache-dumper=false",
            "-v=1",
        ]
    proc = processes.Process(contender, argv, log=logs / f"{contender}.log")
    proc.start()
    return proc


def _start_profiler(proc: processes.Process, out: pathlib.Path) -> subprocess.Popen[bytes] | None:
    """py-spy sampling our scheduler (all threads: the core runs in a worker thread); ends with it."""
    spy = shutil.which("py-spy", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None or proc.pid is None:
        print("profile: py-spy not found (.venv/bin/pip install py-spy)", flush=True)
        return None
    argv = [spy, "record", "--pid", str(proc.pid), "--rate", "200", "--format", "raw", "--nonblocking", "-o", str(out)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def _ceiling(lc: cluster.LocalCluster, uids: dict[str, str], node_names: list[str], connections: int) -> None:
    """Our binder's requests (same body, UID precondition, client, concurrency) and nothing else."""
    names = list(uids)
    async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=connections) as api:

        async def bind(i: int) -> None:
            op = plan.Allocate(f"{NS}/{names[i]}", uids[names[i]], node_names[i % len(node_names)])
            path = paths.resource("v1", "pods", namespace=NS, name=names[i], subresource="binding")
            await api.request("POST", path, body=binder.binding(op))

        await _gather(len(names), bind, connections)


async def _run(
    contender: str,
    work: Workload,
    lc: cluster.LocalCluster,
    args: argparse.Namespace,
    bins: binaries.Binaries,
    vdir: pathlib.Path | None,
) -> Result:
    result = Result(contender, work.name, work.pods)
    async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=SETUP_CONNECTIONS) as api:
        specs = nodes.pool(args.nodes, cpu="32", memory="128Gi", pods=110)
        await _prepare_nodes(api, specs)
        t0 = time.perf_counter()
        gangs = contender != "kube"
        scheduler_name = "default-scheduler" if contender == "kube" else "volcano"
        if contender.startswith("ceiling"):
            scheduler_name = "nobody"
        uids = await _populate(api, work, gangs=gangs, scheduler_name=scheduler_name)
        result.create_seconds = time.perf_counter() - t0
        gc.collect()
        gc.freeze()  # the setup's objects: no collection rescans them while the tracker (and ceiling) run

        tracker = Tracker(work.pods)
        follow = asyncio.create_task(tracker.follow(api))
        await tracker.synced.wait()
        proc: processes.Process | None = None
        spy: subprocess.Popen[bytes] | None = None
        start = time.perf_counter()
        try:
            if contender.startswith("ceiling"):
                # ceiling@N: the same binds over N connections, to show what the client's pool costs.
                _, _, n = contender.partition("@")
                await _ceiling(lc, uids, [s.name for s in specs], int(n) if n else args.ceiling_connections)
            else:
                proc = _start_process(contender, lc, bins, vdir)
                if contender.startswith("ours") and args.profile:
                    spy = _start_profiler(proc, args.profile / f"{contender}-{work.name}.raw")
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
    contender: str, work: Workload, args: argparse.Namespace, bins: binaries.Binaries, vdir: pathlib.Path | None
) -> Result:
    # Volcano reads its own CRDs (hypernodes, numatopologies, ...); its PodGroup and Queue CRDs
    # replace ours, which LocalCluster installs first.
    crds = tuple(sorted((vdir / "crds").glob("*.yaml"))) if contender == "volcano" and vdir else ()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix=f"vbridge-cmp-{contender}-"))
    try:
        with cluster.LocalCluster(workdir, bins=bins, extra_crds=crds) as lc:
            result = asyncio.run(_run(contender, work, lc, args, bins, vdir))
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


# -- report --------------------------------------------------------------------------------------


# Profile buckets: the first whose marker appears in a sample's stack (function name or file) owns it.
PROFILE_BUCKETS = (
    # Modules executing their bodies; a failed import (see _summarize_profile) never gets there.
    ("start-up imports", "_call_with_frames_removed"),
    (
        "core: snapshot + actions (worker thread)",
        "scheduler/api/building.py",
        "scheduler/cycle.py",
        "Scheduler._decide",
    ),
    ("binder: pods/binding POSTs", "scheduler/io/binder.py"),
    ("status writer: PodGroup status, events", "scheduler/io/status.py"),
    ("watches + cache", "scheduler/io/cache.py", "bridge/k8s/watching.py"),
    ("cache.inputs / loop", "scheduler/io/loop.py"),
)
HTTP_STACK = ("aiohttp/", "yarl/", "multidict/", "ssl.py")


def _summarize_profile(path: pathlib.Path, top: int = 12) -> None:
    """Where our scheduler's CPU went, from py-spy's raw (collapsed-stack) output: by part of the
    scheduler, how much of it is the HTTP client stack, and the heaviest functions of ours and
    of the client."""
    if not path.exists():
        print(f"profile {path.name}: no output", flush=True)
        return
    buckets: collections.Counter[str] = collections.Counter()
    in_http: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        bucket = next((b[0] for b in PROFILE_BUCKETS if any(m in stack for m in b[1:])), "other (event loop, idle)")
        buckets[bucket] += n
        if any(m in stack for m in HTTP_STACK):
            in_http[bucket] += n
        # A frame reads "function (path/to/file.py:line)"; paths are relative to sys.path.
        for frame in {f.rpartition(":")[0] for f in stack.split(";")}:
            if frame.partition(" (")[2].startswith(("scheduler/", "bridge/k8s", "aiohttp/")):
                incl[frame + ")"] += n
    if not total:
        return
    print(f"\nprofile {path.name}: {total} samples at 200 Hz = {total / 200:.1f} s of CPU")
    for bucket, n in buckets.most_common():
        print(f"  {100 * n / total:5.1f}%  {bucket}  ({100 * in_http[bucket] / total:.1f}% in aiohttp/ssl)")
    print("  heaviest functions (inclusive):")
    for frame, n in incl.most_common(top):
        print(f"  {100 * n / total:5.1f}%  {frame}")


def report(results: list[Result], targets: bool) -> None:
    print()
    cols = ("pods", 6), ("bound", 6), ("create s", 9), ("first s", 8), ("sched s", 8), ("pods/s", 8)
    print(f"{'workload':<9} {'contender':<9} " + " ".join(f"{c:>{w}}" for c, w in cols))
    for r in results:
        line = (
            f"{r.workload:<9} {r.contender:<9} {r.pods:>6} {r.bound:>6} {r.create_seconds:>9.1f} "
            f"{r.first_bind:>8.1f} {r.seconds:>8.1f} {r.rate:>8.0f}"
        )
        print(line + (f"  ERROR {r.error}" if r.error else ""))
    if not targets:
        return
    by = {(r.workload, r.contender): r for r in results}
    print()
    for work in dict.fromkeys(r.workload for r in results):
        ours = by.get((work, "ours"))
        if ours is None or not ours.rate:
            continue
        for other, target, fmt in (("volcano", 3.0, "{:.2f}×"), ("kube", 1.5, "{:.2f}×"), ("ceiling", 0.8, "{:.0%}")):
            them = by.get((work, other))
            if them is None or not them.rate:
                print(f"{work:<9} ours/{other:<8} n/a ({them.error if them else 'not run'})")
                continue
            ratio = ours.rate / them.rate
            verdict = "met" if ratio >= target else "MISSED"
            print(f"{work:<9} ours/{other:<8} {fmt.format(ratio):>7}  target ≥ {fmt.format(target)}  {verdict}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="100 nodes, 50 gangs of 10, 500 singles")
    p.add_argument("--nodes", type=int, default=None, help="default 1000 (100 with --small)")
    p.add_argument("--gangs", type=int, default=None, help="default 500 (50 with --small)")
    p.add_argument("--gang-size", type=int, default=10)
    p.add_argument("--singles", type=int, default=None, help="default 5000 (500 with --small)")
    p.add_argument(
        "--only",
        default=",".join(CONTENDERS),
        help="comma-separated subset of " + ",".join(CONTENDERS) + ", or ceiling@N (N connections)",
    )
    p.add_argument("--workloads", default="gangs,singles")
    p.add_argument(
        "--ceiling-connections", type=int, default=CONCURRENCY, help="client connections for the ceiling's binds"
    )
    p.add_argument(
        "--repeat", type=int, default=1, help="runs per contender and workload; the table shows the median run"
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per run before giving up")
    p.add_argument("--no-build", action="store_true", help="do not build Volcano's scheduler when it is missing")
    p.add_argument("--profile", type=pathlib.Path, default=None, help="py-spy our scheduler; raw stacks into DIR")
    p.add_argument("--keep-logs", action="store_true", help="keep a failed run's cluster folder and logs")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()
    args.nodes = args.nodes or (100 if args.small else 1000)
    gangs = args.gangs if args.gangs is not None else (50 if args.small else 500)
    singles = args.singles if args.singles is not None else (500 if args.small else 5000)
    contenders = [c for c in args.only.split(",") if c]
    bad = [
        c
        for c in contenders
        if c.partition("@")[0] not in CONTENDERS or ("@" in c and not c[c.find("@") + 1 :].isdigit())
    ]
    if bad:
        p.error(f"unknown contenders: {', '.join(bad)}")
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    all_work = {
        "gangs": Workload("gangs", tuple((f"g{i}", args.gang_size) for i in range(gangs))),
        "singles": Workload("singles", tuple((f"s{i}", 1) for i in range(singles))),
    }
    works = [all_work[w] for w in args.workloads.split(",") if w]

    t_all = time.perf_counter()
    # The tracker and the ceiling's binds run in this process: the same collector settings as
    # `vbridge scheduler`, so neither is slowed by full collections ours does not make.
    gc.set_threshold(*command.GC_THRESHOLDS)
    bins = binaries.ensure()
    vdir, why = (None, "not requested")
    if "volcano" in contenders:
        vdir, why = _volcano_dir(build=not args.no_build)
    print(f"{args.nodes} nodes; workloads: " + ", ".join(f"{w.name} ({w.pods} pods)" for w in works), flush=True)
    results: list[Result] = []
    for work in works:
        runs: dict[str, list[Result]] = {c: [] for c in contenders}
        # Round by round (each contender once per round), so a slow spell of this shared
        # machine falls on every contender alike instead of on one contender's runs.
        for _ in range(args.repeat):
            for contender in contenders:
                if contender == "volcano" and vdir is None:
                    runs[contender].append(Result(contender, work.name, work.pods, error=f"not built: {why}"))
                    continue
                r = run_one(contender, work, args, bins, vdir)
                runs[contender].append(r)
                note = f" ERROR {r.error}" if r.error else ""
                print(
                    f"  {work.name}/{contender}: created in {r.create_seconds:.1f} s; {r.bound}/{r.pods} bound in "
                    f"{r.seconds:.1f} s (first at {r.first_bind:.1f} s) = {r.rate:.0f} pods/s{note}",
                    flush=True,
                )
        results += [median(runs[c]) for c in contenders]
    report(results, targets="ours" in contenders)
    print(f"\nwhole run: {time.perf_counter() - t_all:.0f} s")
    if args.profile:
        for path in sorted(args.profile.glob("ours*.raw")):
            _summarize_profile(path)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop children via the with-blocks
    main()
