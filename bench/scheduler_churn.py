"""Latency under churn (issue 17 item 3): ours vs Volcano's scheduler (and kube-scheduler for singles).

What it measures, its anchor and its flags: bench/README.md.

    .venv/bin/python bench/scheduler_churn.py [--size 1] [--seconds 600] [--rate 4] [--only ours,volcano,kube]
"""

from __future__ import annotations

import argparse
import dataclasses
import signal

from compare import churn, contenders, workloads

from bridge.k8s import client, kubeconfigs
from vbridge.localcluster import binaries, cluster

SIZES = (1, 2, 4, 8, 16, 32, 64)
WEIGHTS = (8, 4, 3, 2, 1, 1, 1)  # mostly small jobs, every size of the scale workloads


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
        gangs = out.stream == "gangs"
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
        try:
            out.error = await stream.run(api, proc.pid, proc.alive)
            out.cycle_ms = churn.cycle_quantiles(port) if out.contender != "kube" else []
        finally:
            proc.stop()
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
    out.error = contenders.in_fresh_cluster(contender, vdir, bins, lambda lc: measure(out, lc, args, bins)) or out.error
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
            verdict = "met" if p99 < theirs else "MISSED"
            print(f"{stream}: {other}/ours pod latency p99 {theirs / max(p99, 1e-6):.2f}×  target > 1×  {verdict}")


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
    p.add_argument("--streams", default="gangs,singles", help="comma-separated subset of gangs,singles")
    p.add_argument("--no-build", action="store_true", help="do not build Volcano's scheduler when it is missing")
    args = p.parse_args()
    args.nodes = args.nodes or max(1, round(5000 * args.size))
    chosen = [c for c in args.only.split(",") if c]
    if any(c not in ("ours", "volcano", "kube") for c in chosen):
        p.error("--only takes ours, volcano and kube")
    streams = [s for s in args.streams.split(",") if s]
    if not streams or any(s not in ("gangs", "singles") for s in streams):
        p.error("--streams takes gangs and singles")
    bins = binaries.ensure()
    args.vdir, why = contenders.volcano_dir(build=not args.no_build) if "volcano" in chosen else (None, "")
    pairs = [("gangs", c) for c in chosen if c != "kube" and "gangs" in streams]
    if "kube" in chosen and "singles" in streams:  # kube-scheduler has no gangs: singles, ours on them too
        pairs += [("singles", c) for c in ("ours", "kube") if c in chosen]
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
