"""Restart to first bind (issue 17 item 2, volcano#5819): ours vs Volcano's scheduler.

What it measures, its anchor and its flags: bench/README.md.

    .venv/bin/python bench/scheduler_restart.py [--size 1] [--pending 0,64] [--only ours,volcano] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import signal
import time

from compare import clock, contenders, workloads

from bridge.k8s import client, kubeconfigs, paths
from vbridge.localcluster import binaries, cluster

NEW = "arrivals"  # the namespace of the jobs created around the restart


@dataclasses.dataclass
class Run:
    contender: str
    pending: int  # members of the gang created while the scheduler was down (0: none)
    setup: float = 0.0  # nodes, PodGroups, bound pods
    first_start: float = 0.0  # first start → the probe pod bound
    to_first_bind: float = 0.0  # restart → the new one-pod job bound
    to_gang: float = 0.0  # restart → the last member of the pending gang bound
    peak_mb: float = 0.0  # VmHWM of the restarted scheduler
    list_floor: float = 0.0  # the apiserver serving every pod as a scheduler's start lists them, bytes only
    list_mb: float = 0.0  # the size of that answer
    error: str = ""


def _pod(name: str, group: str, node: str | None = None) -> dict[str, object]:
    body = workloads.pod_body(name, group, "volcano")
    if node:
        body["spec"]["nodeName"] = node
    return body


async def _job(api: client.Client, ns: str, name: str, size: int, bc: clock.BindClock | None) -> list[str]:
    """A PodGroup of minMember ``size`` and its pods, in ``ns``; their names."""
    pg = {"apiVersion": workloads.PG_API, "kind": "PodGroup", "metadata": {"name": name}}
    pg["spec"] = {"minMember": size, "queue": "default"}
    await api.request("POST", paths.resource(workloads.PG_API, "podgroups", namespace=ns), body=pg)
    names = [f"{name}-{i}" for i in range(size)]

    async def make(i: int) -> None:
        await api.request("POST", paths.resource("v1", "pods", namespace=ns), body=_pod(names[i], name))
        if bc is not None:
            bc.created[names[i]] = time.perf_counter()

    await workloads.gather(size, make, workloads.CONCURRENCY)
    return names


async def populate(api: client.Client, args: argparse.Namespace) -> None:
    """The cluster before the restart: nodes, ``--groups`` PodGroups, ``--pods`` pods created bound."""
    specs = workloads.Workload("restart", ()).nodes(args.nodes)
    await workloads.prepare_nodes(api, specs)
    for ns in (workloads.NS, NEW):
        await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    per_group = max(1, args.pods // args.groups)
    pg_path = paths.resource(workloads.PG_API, "podgroups", namespace=workloads.NS)
    pod_path = paths.resource("v1", "pods", namespace=workloads.NS)

    async def make_pg(i: int) -> None:
        body = {"apiVersion": workloads.PG_API, "kind": "PodGroup", "metadata": {"name": f"g{i}"}}
        body["spec"] = {"minMember": per_group, "queue": "default"}
        await api.request("POST", pg_path, body=body)

    async def make_pod(i: int) -> None:  # bound at creation: no scheduler needed for the setup
        group = i % args.groups
        await api.request("POST", pod_path, body=_pod(f"g{group}-{i}", f"g{group}", specs[i % len(specs)].name))

    await workloads.gather(args.groups, make_pg, 32)
    await workloads.gather(args.pods, make_pod, 32)


async def list_floor(api: client.Client) -> tuple[float, float]:
    """Seconds and MB of one list of every pod from the apiserver's watch cache (``resourceVersion=0``,
    as informers and our cache list at start), nothing decoded: what any scheduler waits for before
    its first safe bind (it must know what is bound where), whatever it does with the answer."""
    t0 = time.perf_counter()
    page = await api.request("GET", "/api/v1/pods", params={"resourceVersion": "0"}, decode=lambda d: {"size": len(d)})
    return time.perf_counter() - t0, page["size"] / 2**20


async def measure(run: Run, lc: cluster.LocalCluster, args: argparse.Namespace, bins: binaries.Binaries) -> None:
    vdir = args.vdir if run.contender == "volcano" else None
    async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=workloads.CONCURRENCY) as api:
        t0 = time.perf_counter()
        await populate(api, args)
        run.setup = time.perf_counter() - t0
        run.list_floor, run.list_mb = await list_floor(api)
        bc = clock.BindClock(NEW)
        follow = asyncio.create_task(bc.follow(api))
        await bc.synced.wait()
        proc = contenders.start_process(run.contender, lc, bins, vdir)
        try:
            start = time.perf_counter()
            names = await _job(api, NEW, "probe", 1, bc)
            run.error = await bc.wait(names, start + args.timeout, proc.alive)
            run.first_start = time.perf_counter() - start
            if run.error:
                return
            assert proc.pid is not None
            os.killpg(proc.pid, signal.SIGKILL)  # a crash, not a shutdown
            proc.stop()
            gang = await _job(api, NEW, "gang", run.pending, bc) if run.pending else []
            proc = contenders.start_process(run.contender, lc, bins, vdir)
            start = time.perf_counter()
            new = await _job(api, NEW, "new", 1, bc)
            run.error = await bc.wait(new, start + args.timeout, proc.alive)
            run.to_first_bind = bc.bound.get(new[0], start) - start
            if gang and not run.error:
                run.error = await bc.wait(gang, start + args.timeout, proc.alive)
                run.to_gang = max(bc.bound[n] for n in gang) - start
            run.peak_mb = clock.peak_rss(proc.pid)
        finally:
            proc.stop()
            follow.cancel()
            await asyncio.gather(follow, return_exceptions=True)


def run_one(contender: str, pending: int, args: argparse.Namespace, bins: binaries.Binaries) -> Run:
    run = Run(contender, pending)
    vdir = args.vdir if contender == "volcano" else None
    run.error = contenders.in_fresh_cluster(contender, vdir, bins, lambda lc: measure(run, lc, args, bins)) or run.error
    return run


def report(runs: list[Run]) -> None:
    """Medians by (pending, contender), and ours against the targets and Volcano in the same run."""
    print(f"\n{'pending':>7} {'contender':<9} {'runs':>4} {'restart→bind s':>14} {'→gang s':>8} {'peak MB':>8}")
    med: dict[tuple[int, str], Run] = {}
    for key in dict.fromkeys((r.pending, r.contender) for r in runs):
        good = sorted(
            (r for r in runs if (r.pending, r.contender) == key and not r.error), key=lambda r: r.to_first_bind
        )
        if not good:
            print(f"{key[0]:>7} {key[1]:<9} failed: {next(r.error for r in runs if (r.pending, r.contender) == key)}")
            continue
        m = med[key] = good[(len(good) - 1) // 2]
        print(f"{key[0]:>7} {key[1]:<9} {len(good):>4} {m.to_first_bind:>14.2f} {m.to_gang:>8.2f} {m.peak_mb:>8.0f}")
    print()
    for pending in dict.fromkeys(r.pending for r in runs):
        ours, volc = med.get((pending, "ours")), med.get((pending, "volcano"))
        if ours is None:
            continue
        verdict = "met" if ours.to_first_bind <= 10 else "MISSED"
        print(f"pending {pending}: ours restart→first bind {ours.to_first_bind:.2f} s  target ≤ 10 s  {verdict}")
        print(f"pending {pending}: ours peak RSS {ours.peak_mb / 1024:.2f} GB  target ≤ 1.5 GB")
        if volc is not None:
            ratio = volc.to_first_bind / max(ours.to_first_bind, 1e-3)
            verdict = "met" if ratio >= 20 else "MISSED"
            print(f"pending {pending}: volcano/ours restart→first bind {ratio:.2f}×  target ≥ 20×  {verdict}")
            floor = ours.list_floor
            print(
                f"pending {pending}: the pod list alone ({ours.list_mb:.0f} MB) took {floor:.2f} s: no scheduler "
                f"that lists before binding beats {volc.to_first_bind / max(floor, 1e-3):.1f}× Volcano here"
            )
            if pending and ours.to_gang:
                print(f"pending {pending}: volcano/ours restart→gang bound {volc.to_gang / ours.to_gang:.2f}×")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=float, default=1.0, help="scales nodes, pods and groups alike (1: 5000/140000/5000)")
    p.add_argument("--nodes", type=int, default=None, help="default 5000 × size")
    p.add_argument("--pods", type=int, default=None, help="bound pods before the restart; default 140000 × size")
    p.add_argument("--groups", type=int, default=None, help="their PodGroups; default 5000 × size")
    p.add_argument("--pending", default="0,64", help="gang sizes created while the scheduler is down (0: none)")
    p.add_argument("--only", default="ours,volcano", help="comma-separated subset of ours,volcano")
    p.add_argument("--repeat", type=int, default=1, help="rounds; the table shows each pair's median run")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per wait before giving up")
    p.add_argument("--no-build", action="store_true", help="do not build Volcano's scheduler when it is missing")
    args = p.parse_args()
    args.nodes = args.nodes or max(1, round(5000 * args.size))
    args.pods = args.pods if args.pods is not None else round(140_000 * args.size)
    args.groups = args.groups or max(1, round(5000 * args.size))
    chosen = [c for c in args.only.split(",") if c]
    if any(c not in ("ours", "volcano") for c in chosen):
        p.error("--only takes ours and volcano")
    bins = binaries.ensure()
    args.vdir, why = contenders.volcano_dir(build=not args.no_build) if "volcano" in chosen else (None, "")
    print(f"{args.nodes} nodes, {args.pods} pods bound in {args.groups} PodGroups; pending gangs: {args.pending}")
    runs: list[Run] = []
    for pending in (int(x) for x in args.pending.split(",")):
        for _ in range(args.repeat):
            for contender in chosen:
                if contender == "volcano" and args.vdir is None:
                    runs.append(Run(contender, pending, error=f"not built: {why}"))
                    continue
                r = run_one(contender, pending, args, bins)
                runs.append(r)
                print(
                    f"  {contender} pending={pending}: setup {r.setup:.1f} s; first start→bind {r.first_start:.2f} s; "
                    f"restart→new job bound {r.to_first_bind:.2f} s; →gang bound {r.to_gang:.2f} s; "
                    f"peak RSS {r.peak_mb:.0f} MB; pod list alone {r.list_floor:.2f} s ({r.list_mb:.0f} MB)"
                    + (f"  ERROR {r.error}" if r.error else ""),
                    flush=True,
                )
    report(runs)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop children via the with-blocks
    main()
