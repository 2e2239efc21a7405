"""Cost as work grows (issue 17 item 5): the pure core's cycle time, CPU per pod and memory, by cluster size.

What it measures and its flags: bench/README.md. Every cell (nodes × pods per node) runs in a
child process of its own, so its peak RSS is its own; the table and a PNG plot come at the end.

    .venv/bin/python bench/scheduler_growth.py [--size 1] [--nodes 1000,5000,10000] [--density 10,30,100]
        [--plot growth.png | --no-plot]
"""

from __future__ import annotations

import argparse
import gc
import json
import pathlib
import resource
import subprocess
import sys
import time
from typing import Any

import scheduler_core

from scheduler import configure, cycle
from scheduler.api import building

PENDING_SHARE = 0.1  # of each cell's pods, pending in gangs of 10; the rest running, spread evenly


def big_node(i: int) -> dict[str, Any]:
    """Room for 100 pods per node and their pending tenth: 256 CPUs, 1 TiB, 250 pods."""
    node = scheduler_core._node(i)
    node["status"]["allocatable"] = {"cpu": "256", "memory": "1Ti", "pods": "250"}
    return node


def cell(nodes: int, density: int, cycles: int) -> dict[str, float]:
    """One cell, in this process: the snapshot built, ``cycles`` cycles, the best one's figures."""
    pods = nodes * density
    pending = max(10, round(pods * PENDING_SHARE / 10) * 10)
    data = scheduler_core.workload(nodes, pods - pending, pending, gang=10, constrained=0.0)
    data["nodes"] = [big_node(i) for i in range(nodes)]
    t0 = time.perf_counter()
    snap = building.build(nodes=data["nodes"], pods=data["pods"], podgroups=data["podgroups"], queues=data["queues"])
    built = time.perf_counter() - t0
    del data
    gc.collect()
    held_mb = _rss_mb()
    conf = configure.default()
    best = best_cpu = float("inf")
    decisions = 0
    for _ in range(cycles):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        plan = cycle.schedule(snap, conf, scheduler_core.NOW)
        best, best_cpu = min(best, time.perf_counter() - wall), min(best_cpu, time.process_time() - cpu)
        decisions = len(plan.pods)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "nodes": nodes,
        "density": density,
        "pods": pods,
        "decisions": decisions,
        "build_s": built,
        "cycle_s": best,
        "cycle_cpu_s": best_cpu,
        "cpu_per_pod_us": 1e6 * best_cpu / max(decisions, 1),
        "held_mb": held_mb,
        "peak_mb": peak_mb,
    }


def _rss_mb() -> float:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1]) / 1024
    return 0.0


def plot(rows: list[dict[str, float]], target: pathlib.Path) -> None:
    """Three panels against pods per node, one line per node count (log axes), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    fig.suptitle("scheduler core: cost as work grows (best cycle, CPU time)")
    panels = (
        ("cycle_cpu_s", "cycle CPU (s)"),
        ("cpu_per_pod_us", "CPU per decided pod (µs)"),
        ("peak_mb", "peak RSS (MB)"),
    )
    for ax, (key, label) in zip(axes, panels, strict=True):
        for nodes in sorted({int(r["nodes"]) for r in rows}):
            mine = sorted((r for r in rows if r["nodes"] == nodes), key=lambda r: r["density"])
            ax.plot([r["density"] for r in mine], [r[key] for r in mine], marker="o", label=f"{nodes:,} nodes")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("pods per node")
        ax.set_title(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.savefig(target, dpi=100, bbox_inches="tight")
    plt.close(fig)
    print(f"plot: {target}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=float, default=1.0, help="scales the node counts (1: 1000, 5000, 10000)")
    p.add_argument("--nodes", default="1000,5000,10000", help="node counts, before --size")
    p.add_argument("--density", default="10,30,100", help="pods per node (a tenth of them pending)")
    p.add_argument("--cycles", type=int, default=2, help="cycles per cell; the best is reported")
    p.add_argument("--plot", type=pathlib.Path, default=pathlib.Path("growth.png"), help="PNG to write")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib needed)")
    p.add_argument("--cell", nargs=2, type=int, metavar=("NODES", "DENSITY"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.cell:  # the child: one cell, one JSON line
        print(json.dumps(cell(args.cell[0], args.cell[1], args.cycles)), flush=True)
        return
    rows: list[dict[str, float]] = []
    head = f"{'nodes':>7} {'pods/node':>9} {'pods':>9} {'decided':>8} {'build s':>8} {'cycle s':>8} {'CPU s':>8}"
    print(head + f" {'CPU µs/pod':>10} {'held MB':>8} {'peak MB':>8}", flush=True)
    for nodes in (max(1, round(int(n) * args.size)) for n in args.nodes.split(",")):
        for density in (int(d) for d in args.density.split(",")):
            argv = [sys.executable, __file__, "--cell", str(nodes), str(density), "--cycles", str(args.cycles)]
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            if done.returncode:
                print(f"{nodes:>7} {density:>9} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(r)
            print(
                f"{r['nodes']:>7,} {r['density']:>9} {r['pods']:>9,} {r['decisions']:>8,} {r['build_s']:>8.2f} "
                f"{r['cycle_s']:>8.3f} {r['cycle_cpu_s']:>8.3f} {r['cpu_per_pod_us']:>10.1f} {r['held_mb']:>8.0f} "
                f"{r['peak_mb']:>8.0f}",
                flush=True,
            )
    # Growth ratios: each cell against the smallest, per pod, so a flat line is linear cost.
    if rows:
        base = rows[0]
        for r in rows[1:]:
            ratio = r["cycle_cpu_s"] / max(base["cycle_cpu_s"], 1e-9) / (r["pods"] / base["pods"])
            print(
                f"ratio cycle CPU per pod, {r['nodes']:,}×{r['density']} vs {base['nodes']:,}×{base['density']}: "
                f"{ratio:.2f} (1 = linear)"
            )
    if rows and not args.no_plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
