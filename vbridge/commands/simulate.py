"""``vbridge simulate TRACE``: read a trace, replay it (:mod:`scheduler.tools.simulate`), report, plot.

The I/O side: the YAML file (read by :mod:`bridge.inputs`: bounded, aliases within kubectl's
bound), a progress line on stderr (only on a terminal: a log gets no ``\\r`` lines), the report
on stdout, and a PNG. A trace the schema refuses
(:mod:`scheduler.tools.traces`: unknown keys, wrong types) is one line naming the file, line and
column of the field: ``trace.yaml:14:5: jobs[2].arival: unknown key; did you mean 'arrival'?``.

The plot, read at a glance: titled with the trace and its makespan; per resource, the share in
use over time; per queue, its dominant share of the cluster over time (which queue held it);
each line in its own style, the legends beside the axes, not over the lines; then the waits per
queue, written whole or not at all (SIGINT or SIGTERM ends the command within 1 s at any
moment: ``vbridge.commands.interrupts``). matplotlib is optional (``pip install
'volcano-bridge[sim]'``) and imported only when a plot is asked for.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any

import yaml

from bridge import errors, inputs
from scheduler.tools import simulate, traces
from vbridge.commands import interrupts

__all__ = ["OUTSIDE", "STYLES", "add_parser", "figure", "load", "main", "plot", "report"]


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
    p.add_argument("--quiet", action="store_true", help="no progress line (there is none unless stderr is a terminal)")
    p.set_defaults(func=main)
    return p


def load(path: pathlib.Path) -> simulate.Trace:
    """The trace in ``path`` (read by ``bridge.inputs``, within its bounds); every error one
    ``FILE[:LINE:COLUMN]: ...`` line (a ConfigError)."""
    data = inputs.read(str(path))  # an InputError (a ConfigError) says what of the file cannot be read
    try:
        text = data.decode("utf-8-sig")
        doc = inputs.yaml_document(str(path), text)
    except UnicodeDecodeError as exc:
        raise errors.ConfigError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except errors.InputError as exc:
        raise errors.ConfigError(f"{exc.where}: not YAML: {exc.detail}") from None
    try:
        return simulate.parse(doc)
    except traces.TraceError as exc:
        line, column = _locate(yaml.compose(text), exc.path, key=exc.key)
        field = f" {traces.where(exc.path)}:" if exc.path else ""
        raise errors.ConfigError(f"{path}:{line}:{column}:{field} {exc.detail}") from None


def _locate(node: yaml.Node | None, path: tuple[str | int, ...], *, key: bool) -> tuple[int, int]:
    """(line, column), from 1, of the deepest node of ``path`` the document has (its key when ``key``)."""
    if node is None:
        return 1, 1
    mark = node.start_mark
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        if isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if k.value == str(part)), None)
            if found is None:
                break
            node = found[0] if last and key else found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        mark = node.start_mark
    return mark.line + 1, mark.column + 1


def main(args: argparse.Namespace) -> int:
    path = pathlib.Path(args.trace)
    trace = load(path)
    target = None if args.no_plot else pathlib.Path(args.plot or f"{path.stem}.png")
    if target is not None:
        _matplotlib()  # fail before a long run, not after it

    def progress(clock: float, done: int, total: int) -> None:
        print(f"\rsimulating: t={clock:,.0f} s, {done}/{total} jobs finished", end="", file=sys.stderr, flush=True)

    shown = not args.quiet and sys.stderr.isatty()  # a \r line is for a person watching, not for a log
    result = simulate.run(trace, progress=progress if shown else None)
    if shown:
        print(file=sys.stderr)
    print(report(result))
    if target is not None:
        plot(result, target, title=f"{path.name}: makespan {_makespan(result)}")
        print(f"plot: {target}")
    return 0


def _makespan(result: simulate.Result) -> str:
    return f"{result.makespan:g} s" if result.makespan is not None else "never (some jobs cannot run)"


def report(result: simulate.Result) -> str:
    lines = [
        f"makespan: {_makespan(result)}; {result.finished} job(s) finished in {result.cycles} cycle(s), "
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


STYLES = ("-", "--", ":", "-.")  # a line style per series, so no line hides another
OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0}  # beside the axes


def figure(result: simulate.Result, title: str) -> Any:
    """The plot as a matplotlib Figure (``plot`` writes it)."""
    plt = _matplotlib()
    fig, (used, queues, waits) = plt.subplots(3, 1, figsize=(10, 10), height_ratios=(1, 1, 0.8))
    fig.suptitle(title)
    times = [s.time for s in result.utilization] + [result.end]
    names = sorted({name for s in result.utilization for name in s.used})
    for i, name in enumerate(names):
        values = [s.used.get(name, 0.0) * 100 for s in result.utilization]
        used.step(times, [*values, values[-1] if values else 0.0], where="post", label=name, linestyle=STYLES[i % 4])
    used.set(xlabel="time (s)", ylabel="in use (%)", title="cluster in use, per resource", ylim=(0, 105))
    used.legend(**OUTSIDE)
    held = sorted({name for s in result.utilization for name in s.queues})
    for i, name in enumerate(held):
        values = [s.queues.get(name, 0.0) * 100 for s in result.utilization]
        queues.step(times, [*values, values[-1] if values else 0.0], where="post", label=name, linestyle=STYLES[i % 4])
    queues.set(xlabel="time (s)", ylabel="dominant share (%)", title="what each queue holds", ylim=(0, 105))
    queues.legend(**OUTSIDE)
    names = [w.queue for w in result.waits]
    xs = range(len(names))
    width = 0.25
    for offset, label, values in (
        (-width, "mean", [w.mean for w in result.waits]),
        (0.0, "p50", [w.p50 for w in result.waits]),
        (width, "p95", [w.p95 for w in result.waits]),
    ):
        waits.bar([x + offset for x in xs], values, width, label=label)
    waits.set_xticks(list(xs), names)
    waits.set(ylabel="wait (s)", title="waits per queue (arrival to minMember bound)")
    waits.legend(**OUTSIDE)
    fig.tight_layout()
    return fig


def plot(result: simulate.Result, target: pathlib.Path, title: str = "simulation") -> None:
    plt = _matplotlib()
    fig = figure(result, title)
    # Written beside it, then renamed: a run interrupted (or a full disk) leaves no half a PNG.
    part = target.with_name(f".{target.name}.part")
    interrupts.at_hard_exit(lambda: part.unlink(missing_ok=True))
    try:
        fig.savefig(part, dpi=100, bbox_inches="tight", format="png")  # the legends beside the axes are kept
        part.replace(target)
    except OSError as exc:
        raise errors.ConfigError(f"cannot write {target}: {exc}") from None
    finally:
        plt.close(fig)
        part.unlink(missing_ok=True)
