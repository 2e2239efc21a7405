"""Scheduler comparison: pods bound per second by ours, kube-scheduler (plain and native gangs), Volcano, the ceiling.

What it measures, its anchor and its flags: bench/README.md.

    .venv/bin/python bench/scheduler_compare.py [--small | --scale] [--repeat N]
        [--only ours,kube,native,volcano,ceiling] [--workloads gangs,singles,mixed] [--profile DIR]
"""

from __future__ import annotations

import argparse
import pathlib
import signal
import time

from compare import contenders, report, workloads

from vbridge.commands import scheduler as scheduler_command
from vbridge.localcluster import binaries

# (nodes, pods) against the defaults, and seconds per run before giving up: issue 17's size is
# scheduler_perf's 5,000 nodes and 50,000 pods, where Volcano binds about 55-60 pods/s (some 15 minutes).
PRESETS = {"small": (0.1, 0.1, 300.0), "default": (1.0, 1.0, 300.0), "scale": (5.0, 10.0, 1800.0)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="100 nodes, 50 gangs of 10, 500 singles")
    p.add_argument("--scale", action="store_true", help="issue 17: 5000 nodes, 5000 gangs of 10, 50000 singles")
    p.add_argument("--nodes", type=int, default=None, help="default 1000 (100 with --small, 5000 with --scale)")
    p.add_argument("--gangs", type=int, default=None, help="default 500 (50 with --small, 5000 with --scale)")
    p.add_argument("--gang-size", type=int, default=10)
    p.add_argument("--singles", type=int, default=None, help="default 5000 (500 with --small, 50000 with --scale)")
    p.add_argument("--mixed-pods", type=int, default=None, help="pods of the mixed workload; default = --singles")
    p.add_argument(
        "--only",
        default=",".join(contenders.CONTENDERS),
        help="comma-separated subset of " + ",".join(contenders.CONTENDERS) + ", or ceiling@N (N connections)",
    )
    p.add_argument("--workloads", default="gangs,singles", help="comma-separated subset of gangs,singles,mixed")
    p.add_argument(
        "--ceiling-connections",
        type=int,
        default=workloads.CONCURRENCY,
        help="client connections for the ceiling's binds",
    )
    p.add_argument(
        "--repeat", type=int, default=1, help="runs per contender and workload; the table shows the median run"
    )
    p.add_argument(
        "--timeout", type=float, default=None, help="seconds per run before giving up (300; 1800 with --scale)"
    )
    p.add_argument("--no-build", action="store_true", help="do not build Volcano's scheduler when it is missing")
    p.add_argument("--profile", type=pathlib.Path, default=None, help="py-spy our scheduler; raw stacks into DIR")
    p.add_argument("--keep-logs", action="store_true", help="keep a failed run's cluster folder and logs")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()
    nodes_preset, pods_preset, timeout = PRESETS["small" if args.small else "scale" if args.scale else "default"]
    args.nodes = args.nodes or int(1000 * nodes_preset)
    args.timeout = args.timeout or timeout
    gangs = args.gangs if args.gangs is not None else int(500 * pods_preset)
    singles = args.singles if args.singles is not None else int(5000 * pods_preset)
    chosen = [c for c in args.only.split(",") if c]
    bad = [
        c
        for c in chosen
        if c.partition("@")[0] not in contenders.CONTENDERS or ("@" in c and not c[c.find("@") + 1 :].isdigit())
    ]
    if bad:
        p.error(f"unknown contenders: {', '.join(bad)}")
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    all_work = {
        "gangs": workloads.Workload("gangs", tuple((f"g{i}", args.gang_size) for i in range(gangs))),
        "singles": workloads.Workload("singles", tuple((f"s{i}", 1) for i in range(singles))),
        "mixed": workloads.mixed(args.mixed_pods or singles, args.nodes),
    }
    works = [all_work[w] for w in args.workloads.split(",") if w]

    t_all = time.perf_counter()
    # The tracker and the ceiling's binds run in this process: the same collector and allocator
    # settings as `vbridge scheduler`, so neither is slowed by work ours does not do.
    scheduler_command.tune_process()
    bins = binaries.ensure()
    vdir, why = (None, "not requested")
    if "volcano" in chosen:
        vdir, why = contenders.volcano_dir(build=not args.no_build)
    print(f"{args.nodes} nodes; workloads: " + ", ".join(f"{w.name} ({w.pods} pods)" for w in works), flush=True)
    results: list[contenders.Result] = []
    for work in works:
        runs: dict[str, list[contenders.Result]] = {c: [] for c in chosen}
        # Round by round (each contender once per round), so a slow spell of this shared
        # machine falls on every contender alike instead of on one contender's runs.
        for _ in range(args.repeat):
            for contender in chosen:
                if contender == "volcano" and vdir is None:
                    runs[contender].append(
                        contenders.Result(contender, work.name, work.pods, error=f"not built: {why}")
                    )
                    continue
                r = contenders.run_one(contender, work, args, bins, vdir)
                runs[contender].append(r)
                note = f" ERROR {r.error}" if r.error else ""
                print(
                    f"  {work.name}/{contender}: created in {r.create_seconds:.1f} s; {r.bound}/{r.pods} bound in "
                    f"{r.seconds:.1f} s (first at {r.first_bind:.1f} s) = {r.rate:.0f} pods/s{note}",
                    flush=True,
                )
        results += [contenders.median(runs[c]) for c in chosen]
    report.report(results, targets="ours" in chosen, ceiling_target=0.9 if args.nodes >= 5000 else 0.8)
    print(f"\nwhole run: {time.perf_counter() - t_all:.0f} s")
    if args.profile:
        for path in sorted(args.profile.glob("ours*.raw")):
            report.summarize_profile(path)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop children via the with-blocks
    main()
