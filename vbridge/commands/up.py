"""``vbridge up``: the embedded default (:mod:`vbridge.embedded`) on a local control plane, until Ctrl-C.

Every option is checked by its argparse ``type`` before anything starts (``--node-cpu abc`` is a
one-line usage error, exit 2). The bridge's own logs (webhook, reconcilers, scheduler, simulated
nodes) go to ``vbridge.log`` in the printed logs folder, beside the control plane's; ``-v``
also shows them on stderr and logs at debug level.

SIGINT or SIGTERM (:mod:`vbridge.commands.interrupts`) ends it within 1 s at any point, with 130
or 143: the bridge unwinds, then the control plane's processes, kube-scheduler and the
operators get SIGTERM at once, and SIGKILL if they are still there at the end or after the
grace; no child outlives it. A temporary work folder (no ``--workdir``) is removed either way.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import pathlib
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bridge import errors, quantity
from vbridge.commands import backends as backend_option
from vbridge.commands import interrupts, output

__all__ = ["EXAMPLES", "LOG_FILE", "add_parser", "count", "main", "port", "positive", "resource", "seconds"]

LOG_FILE = "vbridge.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is too small: at least {minimum}")
        return value

    parse.__name__ = "count"
    return parse


def resource(text: str) -> str:
    """A positive Kubernetes quantity ("16", "500m", "64Gi"), else a usage error."""
    try:
        amount = quantity.parse(text)
    except errors.QuantityError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a quantity; e.g. 16, 500m, 64Gi") from None
    if amount <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0")
    return text


def positive(text: str, unit: str = "") -> float:
    """A number above 0 (e.g. a rate), else a usage error; ``unit`` names it in the message."""
    what = f"a number of {unit}" if unit else "a number"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0" + (f" {unit}" if unit else ""))
    return value


def seconds(text: str) -> float:
    return positive(text, "seconds")


def port(text: str) -> int:
    value = count(1)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a TCP port (1 to 65535)")
    return value


EXAMPLES = """examples:
  vbridge up                                   # 4 nodes of 16 cpu, 64Gi; the seed examples
  vbridge up --with-operators                  # also the spark-operator and training-operator
  vbridge up --nodes 8 --node-gpus 4 --workdir /tmp/vb --port 6443   # reuse the folder and port later
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``up`` on ``parser.add_subparsers()``'s result."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "up",
        help="run a local control plane with simulated nodes until Ctrl-C",
        description="A local control plane (etcd, kube-apiserver, kube-controller-manager), simulated nodes, "
        "the bridge and the gang scheduler in one process, with the seed examples; it shows their "
        "PodGroups and jobs as they change.",
        epilog=EXAMPLES,
    )
    p.add_argument("--nodes", type=count(1), default=4, help="how many simulated nodes")
    p.add_argument("--node-cpu", type=resource, default="16", help="each node's cpu")
    p.add_argument("--node-memory", type=resource, default="64Gi", help="each node's memory")
    p.add_argument("--node-gpus", type=count(0), default=0, help="each node's nvidia.com/gpu")
    p.add_argument(
        "--run-seconds",
        type=seconds,
        default=30.0,
        help="finish pods after this many seconds unless their annotation says otherwise",
    )
    p.add_argument("--no-examples", action="store_true", help="do not apply the seed examples")
    p.add_argument(
        "--with-operators",
        action="store_true",
        help="also run the real spark-operator and training-operator (tools/build-operators.sh builds them)",
    )
    backend_option.add_argument(p)
    p.add_argument("--port", type=port, default=None, help="kube-apiserver port (default: a free one)")
    p.add_argument("--workdir", default=None, help="keep certificates, logs and etcd data here (default: a temp dir)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logs, also on stderr")
    p.set_defaults(func=main)
    return p


def _logging(folder: pathlib.Path, verbose: bool) -> logging.Handler:
    """The bridge's log records into ``folder/vbridge.log`` (and stderr with ``verbose``)."""
    folder.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    handler = logging.FileHandler(folder / LOG_FILE)
    handler.setFormatter(logging.Formatter(_FORMAT))
    root.addHandler(handler)
    if verbose:
        echo = logging.StreamHandler()
        echo.setFormatter(logging.Formatter(_FORMAT))
        root.addHandler(echo)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("asyncio", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler


def main(args: argparse.Namespace) -> int:
    from vbridge import embedded
    from vbridge.localcluster import binaries, cluster, kubescheduler, operators
    from vbridge.nodesim import nodes

    # SIGINT or SIGTERM: the bridge unwinds (its webhook unregistered while the apiserver still
    # answers), then every child's process group (control plane, kube-scheduler, operators) gets
    # SIGTERM at once; what is left at the end, or after the grace, is killed.
    interrupts.terminate_children()
    say = output.write
    say("volcano-bridge: preparing the control-plane binaries (built from Go modules on first use)...")
    bins = binaries.ensure()
    if args.workdir:
        workdir = pathlib.Path(args.workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        scratch = None
    else:  # ours to remove, also when the watchdog ends the process
        workdir = scratch = pathlib.Path(tempfile.mkdtemp(prefix="vbridge-cluster-"))
        interrupts.at_hard_exit(lambda: shutil.rmtree(workdir, ignore_errors=True))
    # native and auto: the control plane serves the Workload API (its gates and runtime-config),
    # kube-scheduler places the gangs instead of our scheduler.
    native = args.backend != "volcano"
    lc = cluster.LocalCluster(workdir, bins=bins, ports=cluster.Ports(apiserver=args.port), native_gangs=native)
    handler = _logging(lc.workdir / "logs", args.verbose)
    t0 = time.monotonic()
    say("starting etcd, kube-apiserver and kube-controller-manager...")
    try:
        with lc:
            say(f"control plane ready in {time.monotonic() - t0:.1f} s at {lc.server}")
            running_operators = embedded.WITH_OPERATORS if args.with_operators else ()
            operator_logs = "".join(f", {lc.workdir / n / (n + '.log')}" for n in running_operators)
            say(
                f"\n  kubeconfig: {lc.kubeconfig}\n"
                f"  try:        export KUBECONFIG={lc.kubeconfig}\n"
                f"              {bins.folder / 'kubectl'} get nodes,queues,podgroups -A\n"
                f"              vbridge list -A\n"
                f"  logs:       {lc.workdir / 'logs'} ({LOG_FILE}: webhook, reconcilers, scheduler{operator_logs})\n"
                "  stop:       Ctrl-C\n"
            )
            specs = nodes.pool(args.nodes, cpu=args.node_cpu, memory=args.node_memory, gpus=args.node_gpus)
            opts = embedded.Options(
                specs=tuple(specs),
                run_seconds=args.run_seconds,
                examples=not args.no_examples,
                operators=running_operators,
                backend=args.backend,
            )
            with contextlib.ExitStack() as running:
                # Started here, on the main thread: child processes die with the thread that made them.
                for name in running_operators:
                    say(f"starting the upstream {name} (built from its Go module, default flags)...")
                    running.enter_context(operators.Operator(name, lc))
                if native:
                    say("starting kube-scheduler with GenericWorkload (it places the gangs)...")
                    running.callback(kubescheduler.start(lc, bins).stop)
                try:
                    interrupts.run(embedded.run(lc, opts, say))  # until a signal
                finally:
                    say("stopping...")
                    interrupts.children(signal.SIGTERM)  # all at once; the stops below wait for them
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0
