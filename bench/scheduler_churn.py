"""Latency under churn (issue 17 item 3): ours vs Volcano's scheduler (and kube-scheduler for singles);
the ``backlog`` stream (issue 31): a small tenant's latency beside a backlog the cluster cannot hold.

What it measures, its anchor and its flags: bench/README.md.

    .venv/bin/python bench/scheduler_churn.py [--size 1] [--seconds 600] [--rate 4] [--only ours,volcano,kube]
    .venv/bin/python bench/scheduler_churn.py --streams backlog [--backlog-pods 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import signal
import time

from compare import churn, contenders, workloads

from bridge.k8s import client, kubeconfigs, paths
from vbridge.localcluster import binaries, cluster

SIZES = (1, 2, 4, 8, 16, 32, 64)
WEIGHTS = (8, 4, 3, 2, 1, 1, 1)  # mostly small jobs, every size of the scale workloads
SMALL_SIZES, SMALL_WEIGHTS = (1, 2, 4), (4, 2, 1)  # the small tenant beside a backlog
STREAMS = ("gangs", "singles", "backlog")
# Clients of the apiserver that are the test bed's, not a contender's (audit log User-Agents; urllib: metrics scrapes).
BED_AGENTS = ("vbridge", "kube-apiserver", "kube-controller-manager", "Python-urllib", "?")


@dataclasses.dataclass
class Outcome:
    contender: str
    stream: str  # gangs (sizes 1–64) or singles
    jobs: int = 0
    pods: int = 0
    bound: int = 0
    pod_latency: list[float] = dataclasses.field(default_factory=list)
    gang_latency: list[float] = dataclasses.field(default_factory=list)
    cycle_ms: list[float] = dataclasses.field(default_factory=list)  # p50, p99 (bucket bounds)
    cpu_per_pod_ms: float = 0.0
    samples: list[tuple[float, float, float]] = dataclasses.field(default_factory=list)
    requests: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)  # agent -> verb -> per s
    backlog_bound: int = 0
    error: str = ""


def quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(out: Outcome, lc: cluster.LocalCluster, args: argparse.Namespace, bins: binaries.Binaries) -> None:
    vdir = args.vdir if out.contender == "volcano" else None
    async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=workloads.CONCURRENCY) as api:
        await workloads.prepare_nodes(api, workloads.Workload("churn", ()).nodes(args.nodes))
        await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": churn.NS}})
        port = cluster.free_port()
        proc = contenders.start_process(out.contender, lc, bins, vdir, metrics_port=port)
        gangs = out.stream != "singles"
        stream = churn.Stream(
            rate=args.rate,
            seconds=args.seconds,
            lifetime=args.lifetime,
            sizes=SIZES,
            weights=WEIGHTS,
            gangs=out.contender != "kube",  # ours and Volcano: singles as PodGroups of minMember 1
            scheduler_name="default-scheduler" if out.contender == "kube" else "volcano",
            sample=args.sample,
            drain=args.drain,
        )
        if not gangs:
            stream.sizes, stream.weights = (1,), (1,)
        backlog = None
        if out.stream == "backlog":
            stream.sizes, stream.weights = SMALL_SIZES, SMALL_WEIGHTS
            big = churn.Backlog(args.backlog_pods, gangs=stream.gangs, scheduler_name=stream.scheduler_name)
            backlog = asyncio.create_task(big.submit(api))
        started = time.perf_counter()
        try:
            out.error = await stream.run(api, proc.pid, proc.alive)
            qs = (0.5, 0.99, 1.0) if backlog else (0.5, 0.99)
            out.cycle_ms = churn.cycle_quantiles(port, qs) if out.contender != "kube" else []
            if backlog is not None:
                await backlog
                listed = await api.request("GET", paths.resource("v1", "pods", namespace=churn.BACKLOG_NS))
                out.backlog_bound = sum(1 for p in listed.get("items") or [] if (p.get("spec") or {}).get("nodeName"))
        finally:
            proc.stop()
        if lc.audit_rules:
            every = churn.requests_by_agent(lc.audit_log, time.perf_counter() - started)
            out.requests = {agent: verbs for agent, verbs in every.items() if agent not in BED_AGENTS}
        out.jobs = len(stream.jobs)
        out.pods = sum(len(j.pods) for j in stream.jobs)
        out.bound = len(stream.clock.bound)
        out.pod_latency = stream.clock.latencies()
        out.gang_latency = [j.done - j.first_created for j in stream.jobs if j.done and len(j.pods) > 1]
        out.samples = stream.samples
        cpu = stream.samples[-1][2] if stream.samples else 0.0
        out.cpu_per_pod_ms = 1000 * cpu / max(out.bound, 1)


def run_one(contender: str, stream: str, args: argparse.Namespace, bins: binaries.Binaries) -> Outcome:
    out = Outcome(contender, stream)
    vdir = args.vdir if contender == "volcano" else None

    async def body(lc: cluster.LocalCluster) -> None:
        await measure(out, lc, args, bins)

    audited = stream == "backlog"  # its report counts each client's requests
    out.error = contenders.in_fresh_cluster(contender, vdir, bins, body, audited=audited) or out.error
    return out


def show(o: Outcome) -> None:
    lat, gang = o.pod_latency, o.gang_latency
    cyc = "/".join(f"≤{c:.0f}" for c in o.cycle_ms) if o.cycle_ms else "n/a"
    print(
        f"  {o.stream}/{o.contender}: {o.jobs} jobs, {o.bound}/{o.pods} pods bound; pod latency p50 "
        f"{quantile(lat, 0.5):.3f} s p99 {quantile(lat, 0.99):.3f} s max {max(lat, default=0):.3f} s; gang "
        f"p50 {quantile(gang, 0.5):.3f} s p99 {quantile(gang, 0.99):.3f} s max {max(gang, default=0):.3f} s; "
        f"cycle p50/p99 {cyc} ms; CPU {o.cpu_per_pod_ms:.2f} ms/pod" + (f"  ERROR {o.error}" if o.error else ""),
        flush=True,
    )
    print("    RSS MB over time: " + " ".join(f"{t:.0f}s:{m:.0f}" for t, m, _ in o.samples))
    if o.stream == "backlog":
        print(f"    backlog pods bound at the end: {o.backlog_bound}; cycle p50/p99/max {cyc} ms")
        for agent, verbs in sorted(o.requests.items()):
            rates = ", ".join(f"{verb} {rate:.1f}/s" for verb, rate in sorted(verbs.items()))
            print(f"    apiserver requests from {agent}: {rates}")
    half = [s[1] for s in o.samples[len(o.samples) // 2 :]]
    low, high = (min(half), max(half)) if half else (0.0, 0.0)
    if low:
        print(f"    RSS over the last half: {low:.0f}–{high:.0f} MB ({high / low - 1:+.1%} spread)")


def report(outs: list[Outcome]) -> None:
    by = {(o.stream, o.contender): o for o in outs if not o.error}
    print()
    for stream in dict.fromkeys(o.stream for o in outs):
        ours = by.get((stream, "ours"))
        if ours is None:
            continue
        p99 = quantile(ours.pod_latency, 0.99)
        print(f"{stream}: ours pod latency p99 {p99:.3f} s  target ≤ 2 s  {'met' if p99 <= 2 else 'MISSED'}")
        for other in ("volcano", "kube"):
            them = by.get((stream, other))
            if them is None:
                continue
            theirs = quantile(them.pod_latency, 0.99)
            # Beside a backlog, kube-scheduler (no gangs) is matched, Volcano beaten (issue 31).
            met = p99 <= theirs if stream == "backlog" and other == "kube" else p99 < theirs
            target = "≥ 1×" if stream == "backlog" and other == "kube" else "> 1×"
            verdict = "met" if met else "MISSED"
            print(f"{stream}: {other}/ours pod latency p99 {theirs / max(p99, 1e-6):.2f}×  target {target}  {verdict}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=float, default=1.0, help="scales the nodes (1: 5000)")
    p.add_argument("--nodes", type=int, default=None, help="default 5000 × size")
    p.add_argument("--seconds", type=float, default=600.0, help="length of the arrivals")
    p.add_argument("--rate", type=float, default=4.0, help="jobs per second")
    p.add_argument("--lifetime", type=float, default=30.0, help="seconds a job runs once its last pod is bound")
    p.add_argument("--sample", type=float, default=10.0, help="seconds between RSS/CPU samples")
    p.add_argument("--drain", type=float, default=60.0, help="seconds to wait for pending pods after the arrivals")
    p.add_argument("--only", default="ours,volcano,kube", help="comma-separated subset of ours,volcano,kube")
    p.add_argument("--repeat", type=int, default=1, help="rounds (every run is printed)")
    p.add_argument("--streams", default="gangs,singles", help="comma-separated subset of gangs,singles,backlog")
    p.add_argument("--backlog-pods", type=int, default=None, help="the backlog stream's big tenant (default 2 × nodes)")
    p.add_argument("--no-build", action="store_true", help="do not build Volcano's scheduler when it is missing")
    args = p.parse_args()
    args.nodes = args.nodes or max(1, round(5000 * args.size))
    chosen = [c for c in args.only.split(",") if c]
    if any(c not in ("ours", "volcano", "kube") for c in chosen):
        p.error("--only takes ours, volcano and kube")
    streams = [s for s in args.streams.split(",") if s]
    if not streams or any(s not in STREAMS for s in streams):
        p.error("--streams takes " + ", ".join(STREAMS))
    args.backlog_pods = args.backlog_pods or 2 * args.nodes
    bins = binaries.ensure()
    args.vdir, why = contenders.volcano_dir(build=not args.no_build) if "volcano" in chosen else (None, "")
    pairs = [("gangs", c) for c in chosen if c != "kube" and "gangs" in streams]
    if "kube" in chosen and "singles" in streams:  # kube-scheduler has no gangs: singles, ours on them too
        pairs += [("singles", c) for c in ("ours", "kube") if c in chosen]
    pairs += [("backlog", c) for c in chosen if "backlog" in streams]
    print(f"{args.nodes} nodes; {args.rate} jobs/s for {args.seconds:.0f} s, each running {args.lifetime:.0f} s")
    outs: list[Outcome] = []
    for _ in range(args.repeat):
        for stream, contender in pairs:
            if contender == "volcano" and args.vdir is None:
                outs.append(Outcome(contender, stream, error=f"not built: {why}"))
                continue
            o = run_one(contender, stream, args, bins)
            outs.append(o)
            show(o)
    report(outs)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop children via the with-blocks
    main()
