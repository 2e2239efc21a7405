"""The ``vbridge`` command line.

Modules are imported by the command that needs them, so that a long-running service starts
without paying for every other command's imports (the scheduler's first cycle counts from its
start: the whole set takes ~0.6 s to import, the scheduler's own ~0.3 s).

``vbridge --version`` prints the installed distribution's version (package metadata, so
pyproject.toml is its only source). A bare ``vbridge`` prints the help on stderr and exits 2,
as argparse does for any other missing argument. ``kubectl_main`` is the same command as the
kubectl plugin ``kubectl-vbridge`` (its help and errors say ``kubectl vbridge``).
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import sys
import time
from typing import Any

from bridge import errors

__all__ = ["DISTRIBUTION", "KUBECTL_PROG", "kubectl_main", "main", "parser", "version"]

DISTRIBUTION = "volcano-bridge"
# kubectl runs a plugin named kubectl-<name> found on PATH with the arguments after <name>.
KUBECTL_PROG = "kubectl vbridge"

# Subcommands defined in their own modules (each has ``add_parser(subparsers)``), by name.
EXTERNAL = {
    "serve": "vbridge.commands.serve",
    "controllers": "vbridge.commands.controllers",
    "scheduler": "vbridge.commands.scheduler",
    "explain": "vbridge.commands.explain",
    "simulate": "vbridge.commands.simulate",
    "job": "vbridge.commands.jobs",
    "queue": "vbridge.commands.jobs",
    "doctor": "vbridge.commands.doctor",
    "translate": "vbridge.commands.translate",
}


def version() -> str:
    """The installed distribution's version, from its metadata."""
    import importlib.metadata

    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed: no package metadata)"


class _Version(argparse.Action):
    """``--version``, with the metadata read only when asked (not on every start)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, p: argparse.ArgumentParser, *_: object) -> None:
        print(f"vbridge {version()}", flush=True)
        p.exit()


def _say(msg: str) -> None:
    print(msg, flush=True)


def cmd_up(args: argparse.Namespace) -> int:
    import asyncio
    import contextlib

    from vbridge import embedded
    from vbridge.localcluster import binaries, cluster, operators
    from vbridge.nodesim import nodes

    _say("volcano-bridge: preparing the control-plane binaries (built from Go modules on first use)...")
    bins = binaries.ensure()
    workdir = pathlib.Path(args.workdir).resolve() if args.workdir else None
    if workdir:
        workdir.mkdir(parents=True, exist_ok=True)
    lc = cluster.LocalCluster(workdir, bins=bins, ports=cluster.Ports(apiserver=args.port))
    t0 = time.monotonic()
    _say("starting etcd, kube-apiserver and kube-controller-manager...")
    with lc:
        _say(f"control plane ready in {time.monotonic() - t0:.1f} s at {lc.server}")
        _say(
            f"\n  kubeconfig: {lc.kubeconfig}\n"
            f"  try:        export KUBECONFIG={lc.kubeconfig}\n"
            f"              {bins.folder / 'kubectl'} get nodes,queues,podgroups -A\n"
            f"  logs:       {lc.workdir / 'logs'}\n"
            "  stop:       Ctrl-C\n"
        )
        specs = nodes.pool(args.nodes, cpu=args.node_cpu, memory=args.node_memory, gpus=args.node_gpus)
        opts = embedded.Options(specs=tuple(specs), run_seconds=args.run_seconds, examples=not args.no_examples)
        with contextlib.ExitStack() as running:
            # Started here, on the main thread: child processes die with the thread that made them.
            for name in embedded.WITH_OPERATORS if args.with_operators else ():
                _say(f"starting the upstream {name} (built from its Go module, default flags)...")
                running.enter_context(operators.Operator(name, lc))
            asyncio.run(embedded.run(lc, opts, _say))
        _say("stopping...")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from vbridge.localcluster import binaries

    bins = binaries.ensure(extras=not args.no_extras)
    _say(f"control plane: {bins.folder}")
    for name, folder in bins.extras.items():
        _say(f"{name}: {folder}")
    return 0


def cmd_crds(args: argparse.Namespace) -> int:
    from bridge import crdgen

    folder = pathlib.Path(args.dir)
    if args.check:
        stale = crdgen.check(folder)
        if stale:
            _say(f"out of date: {', '.join(stale)}; run `vbridge crds --write`")
            return 1
        _say("CRDs are up to date")
        return 0
    for path in crdgen.write(folder):
        _say(f"wrote {path}")
    return 0


def cmd_chart(args: argparse.Namespace) -> int:
    from vbridge import chartgen

    if args.check:
        stale = chartgen.check()
        if stale:
            _say(f"chart out of date: {', '.join(stale)}; run `vbridge chart --write`")
            return 1
        _say("chart is up to date")
        return 0
    for path in chartgen.write():
        _say(f"wrote {path}")
    return 0


def _add_external(sub: Any, module_name: str) -> None:
    module = importlib.import_module(module_name)
    register = getattr(module, "add_parser", None) or module.add_parsers
    register(sub)


def parser(command: str | None = None, *, prog: str = "vbridge") -> argparse.ArgumentParser:
    """The whole parser; for a subcommand of ``EXTERNAL``, only that one (and only its imports)."""
    p = argparse.ArgumentParser(prog=prog, description="Volcano gang scheduling for unchanged workloads.")
    p.add_argument("--version", action=_Version, help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True)
    if command in EXTERNAL:
        _add_external(sub, EXTERNAL[command])
        return p
    if command == "--version":
        return p  # nothing else is read
    up = sub.add_parser("up", help="run a local control plane with simulated nodes until Ctrl-C")
    up.add_argument("--nodes", type=int, default=4)
    up.add_argument("--node-cpu", default="16")
    up.add_argument("--node-memory", default="64Gi")
    up.add_argument("--node-gpus", type=int, default=0)
    up.add_argument(
        "--run-seconds",
        type=float,
        default=30.0,
        help="finish pods after this many seconds unless their annotation says otherwise",
    )
    up.add_argument("--no-examples", action="store_true", help="do not apply the seed examples")
    up.add_argument(
        "--with-operators",
        action="store_true",
        help="also run the real spark-operator and training-operator (tools/build-operators.sh builds them)",
    )
    up.add_argument("--port", type=int, default=None, help="kube-apiserver port (default: a free one)")
    up.add_argument("--workdir", default=None, help="keep certificates, logs and etcd data here")
    up.set_defaults(func=cmd_up)
    build = sub.add_parser("build", help="build (or find cached) Go binaries")
    build.add_argument("--no-extras", action="store_true", help="skip kwok and helm")
    build.set_defaults(func=cmd_build)
    crds = sub.add_parser("crds", help="generate the CRDs from the models")
    crds.add_argument("--dir", default="crds")
    mode = crds.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", default=True)
    mode.add_argument("--check", action="store_true")
    crds.set_defaults(func=cmd_crds)
    chart = sub.add_parser("chart", help="generate the Helm chart's registry-derived files")
    chart_mode = chart.add_mutually_exclusive_group()
    chart_mode.add_argument("--write", action="store_true", default=True)
    chart_mode.add_argument("--check", action="store_true")
    chart.set_defaults(func=cmd_chart)
    for module_name in dict.fromkeys(EXTERNAL.values()):
        _add_external(sub, module_name)
    return p


def main(argv: list[str] | None = None, *, prog: str = "vbridge") -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        parser(prog=prog).print_help(sys.stderr)
        return 2
    args = parser(argv[0] if argv else None, prog=prog).parse_args(argv)
    try:
        return int(args.func(args))
    except errors.BridgeError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `vbridge translate f | head`
        return 0


def kubectl_main(argv: list[str] | None = None) -> int:
    """The ``kubectl-vbridge`` console script: ``kubectl vbridge explain ...`` is ``vbridge explain ...``."""
    return main(argv, prog=KUBECTL_PROG)


if __name__ == "__main__":
    sys.exit(main())
