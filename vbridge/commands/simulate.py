"""``vbridge simulate TRACE``: read a trace, replay it (:mod:`scheduler.tools.simulate`), report, plot.

The I/O side: the YAML file, a progress line on stderr, the report on stdout, and a PNG
(utilization over time, waits per queue). matplotlib is optional (``pip install
'volcano-bridge[sim]'``) and imported only when a plot is asked for.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any

import yaml

from bridge import errors
from scheduler.tools import simulate

__all__ = ["add_parser", "main", "plot", "report"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the subcommand on ``parser.add_subparsers()``'s result."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "simulate",
        help="replay a workload trace through the scheduler core on a simulated clock",
        description="Replay a trace (nodes, queues, jobs) through the scheduler's own core, no apiserver: "
        "makespan, utilization, waits per queue, and a PNG plot.",
        epilog="examples:\n  vbridge simulate examples/traces/two-queues.yaml --plot /tmp/two-queues.png\n"
        "  vbridge simulate trace.yaml --no-plot\n",
    )
    p.add_argument("trace", help="trace YAML (see examples/traces/)")
    p.add_argument("--plot", default=None, help="PNG to write (default: <trace name>.png in the current folder)")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib needed)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=main)
    return p


def main(args: argparse.Namespace) -> int:
    path = pathlib.Path(args.trace)
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise errors.ConfigError(f"cannot read trace {path}: {exc}") from None
    if not isinstance(doc, dict):
        raise errors.ConfigError(f"trace {path} must be a mapping with nodes, queues and jobs")
    trace = simulate.parse(doc)
    target = None if args.no_plot else pathlib.Path(args.plot or f"{path.stem}.png")
    if target is not None:
        _matplotlib()  # fail before a long run, not after it

    def progress(clock: float, done: int, total: int) -> None:
        print(f"\rsimulating: t={clock:,.0f} s, {done}/{total} jobs finished", end="", file=sys.stderr, flush=True)

    result = simulate.run(trace, progress=None if args.quiet else progress)
    if not args.quiet:
        print(file=sys.stderr)
    print(report(result))
    if target is not None:
        plot(result, target)
        print(f"plot: {target}")
    return 0


def report(result: simulate.Result) -> str:
    makespan = f"{result.makespan:g} s" if result.makespan is not None else "never (some jobs cannot run)"
    lines = [
        f"makespan: {makespan}; {result.finished} job(s) finished in {result.cycles} cycle(s), "
        f"{result.evictions} eviction(s)",
    ]
    if result.unfinished:
        lines.append(f"unfinished: {', '.join(result.unfinished)}")
    used = ", ".join(f"{name} {frac:.0%}" for name, frac in sorted(result.mean_utilization.items()))
    lines.append(f"mean utilization: {used or 'n/a'}")
    lines.append("waits (arrival → minMember bound), per queue:")
    lines += [
        f"  {w.queue}: {w.jobs} job(s), mean {w.mean:.1f} s, p50 {w.p50:g} s, p95 {w.p95:g} s" for w in result.waits
    ]
    return "\n".join(lines)


def _matplotlib() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, no display
        import matplotlib.pyplot as plt
    except ImportError:
        raise errors.ConfigError(
            "the plot needs matplotlib: pip install 'volcano-bridge[sim]' (or pass --no-plot)"
        ) from None
    return plt


def plot(result: simulate.Result, target: pathlib.Path) -> None:
    plt = _matplotlib()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7))
    names = sorted({name for s in result.utilization for name in s.used})
    times = [s.time for s in result.utilization] + [result.end]
    for name in names:
        values = [s.used.get(name, 0.0) * 100 for s in result.utilization]
        top.step(times, [*values, values[-1] if values else 0.0], where="post", label=name)
    top.set(xlabel="time (s)", ylabel="in use (%)", title="utilization", ylim=(0, 105))
    top.legend(loc="upper right")
    queues = [w.queue for w in result.waits]
    xs = range(len(queues))
    width = 0.25
    for offset, label, values in (
        (-width, "mean", [w.mean for w in result.waits]),
        (0.0, "p50", [w.p50 for w in result.waits]),
        (width, "p95", [w.p95 for w in result.waits]),
    ):
        bottom.bar([x + offset for x in xs], values, width, label=label)
    bottom.set_xticks(list(xs), queues)
    bottom.set(ylabel="wait (s)", title="waits per queue")
    bottom.legend()
    fig.tight_layout()
    try:
        fig.savefig(target, dpi=100)
    except OSError as exc:
        raise errors.ConfigError(f"cannot write {target}: {exc}") from None
    finally:
        plt.close(fig)
