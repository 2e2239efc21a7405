"""``vbridge scheduler``: run the gang scheduler against a kube-apiserver until interrupted.

``--metrics-host``/``--metrics-port``: ``/metrics`` and ``/healthz``. With ``--leader-elect`` it
binds only while holding the Lease ``<schedulerName>-scheduler`` in ``--lease-namespace``
(default ``$POD_NAMESPACE``, else kube-system); on SIGTERM it hands the Lease back (client-go's
ReleaseOnCancel), so a standby takes over at its next retry, and exits 0.

``--backend native``: kube-scheduler places the pods (Workload API); this process runs only the
queue half of the cycle (``scheduler.configure``: enqueue with the conf's plugins, then lifting
the queue gate ``keys.QUEUE_GATE`` from the pods of each admitted group) and writes the
PodGroup and Queue status as on the Volcano backend. ``--scheduler-name`` then defaults to
kube-scheduler's, whose pods it reads.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import logging
import signal
from typing import Any

import uvloop

from bridge import defaults, errors, inputs
from bridge.k8s import client, kubeconfigs, owners
from scheduler import configure
from scheduler.framework import config
from scheduler.io import loop
from vbridge.commands import backends as backend_option
from vbridge.commands import connecting, leasing, up

__all__ = ["GC_THRESHOLDS", "MALLOC_OPTIONS", "add_backend", "add_parser", "load_config", "main", "tune_process"]

GC_THRESHOLDS = (10_000, 50, 100)  # Python's defaults: (700, 10, 10)
# glibc's malloc (``mallopt``): (M_MMAP_THRESHOLD, 4 MiB), (M_TRIM_THRESHOLD, 64 MiB), (M_TOP_PAD,
# 16 MiB). A cycle makes and drops many arrays over every node (80 KiB at 10,000 nodes): with
# these they come from the heap rather than fresh mappings, and what a cycle frees stays with the
# process for the next one, so its pages are not faulted in again (about 2 % of a cycle at
# 10,000 nodes, bench/scheduler_core.py). The heap keeps up to 64 MiB it could hand back.
MALLOC_OPTIONS = ((-3, 4 << 20), (-1, 64 << 20), (-2, 16 << 20))


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the subcommand on ``parser.add_subparsers()``'s result."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "scheduler", help="run the gang scheduler (Volcano semantics) against a cluster"
    )
    connecting.add_arguments(p)
    add_backend(p, "schedule pods with this spec.schedulerName")
    p.add_argument("--conf", default=None, help="volcano-scheduler.conf (default: Volcano's defaults)")
    p.add_argument(
        "--period", type=float, default=defaults.SCHEDULER_PERIOD, help="seconds between cycles when nothing happens"
    )
    p.add_argument(
        "--status-qps",
        type=up.positive,
        default=defaults.STATUS_QPS,
        help="status writes (PodGroup, Queue, pod conditions, Events) a second, off the cycle's path",
    )
    p.add_argument(
        "--status-burst", type=up.count(1), default=defaults.STATUS_BURST, help="... in bursts of at most this many"
    )
    p.add_argument("--metrics-port", type=int, default=None, help="serve /metrics and /healthz on HOST:PORT")
    p.add_argument("--metrics-host", default="127.0.0.1", help="listen address of the metrics (the chart: 0.0.0.0)")
    leasing.add_arguments(p, what="bind")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logs")
    p.set_defaults(func=main)
    return p


def add_backend(p: argparse.ArgumentParser, name_help: str, *, auto: bool = False) -> None:
    """``--backend`` and ``--scheduler-name`` (whose default follows the backend), for every
    command that reads groups as the scheduler does; ``auto``: also (and by default) the backend
    found from the cluster (``explain``)."""
    help = "volcano: our scheduler places the pods; native: it admits groups, kube-scheduler places them"
    if auto:
        help += "; auto: the one the cluster shows (default)"
        backend_option.add_argument(p, choices=defaults.BACKENDS, help=help, default="auto")
    else:
        backend_option.add_argument(p, choices=(defaults.BACKEND, defaults.NATIVE), help=help)
    p.add_argument(
        "--scheduler-name",
        default=None,
        help=f"{name_help} (default: {defaults.SCHEDULER_NAME}; native: {defaults.NATIVE_SCHEDULER_NAME})",
    )


def load_config(
    path: str | None, scheduler_name: str | None, backend: str = defaults.BACKEND
) -> config.SchedulerConfig:
    """The conf at ``path`` (Volcano's defaults when None) for ``backend``; the name None: the
    backend's default."""
    if path is None:
        return configure.parse("", scheduler_name=scheduler_name, backend=backend)
    data = inputs.read(path)  # bounded, a regular file: an InputError says what of it cannot be read
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise errors.ConfigError(f"{path}: scheduler conf is not UTF-8 text ({exc.reason})") from None
    return configure.parse(text, scheduler_name=scheduler_name, backend=backend)


def main(args: argparse.Namespace) -> int:
    conn = connecting.connection(args)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(relativeCreated)7.0fms %(levelname)s %(name)s: %(message)s",
    )
    conf = load_config(args.conf, args.scheduler_name, args.backend)
    tune_process()
    uvloop.run(_run(args, conf, conn))  # cheaper I/O: the bind path is many small requests
    return 0


def tune_process() -> bool:
    """The collector's thresholds (``GC_THRESHOLDS``) and the allocator's (``MALLOC_OPTIONS``), as
    the scheduler runs its cycles; whether the allocator took them (False without glibc)."""
    # The heap is mostly the cache's API objects: long-lived, frozen out of the collector once
    # listed (``loop.Scheduler``). Rarer young collections and full ones only after 100 of the
    # middle generation: at the defaults, binding 5,000 pods spent ~0.4 s in full collections.
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): its defaults stay
        return False
    return all(mallopt(option, value) == 1 for option, value in MALLOC_OPTIONS)


async def _run(args: argparse.Namespace, conf: config.SchedulerConfig, conn: kubeconfigs.Connection) -> None:
    # Watches and lists on one client; binds and status writes on another, with a connection for
    # each bind the binder keeps in flight (64), so long watches never hold a bind back.
    agent = defaults.SCHEDULER_USER_AGENT
    async with (
        client.Client(conn, connections=16, user_agent=agent) as api,
        client.Client(conn, connections=64, user_agent=agent) as writer,
    ):
        lease_name = conf.scheduler_name + defaults.SCHEDULER_LEASE_SUFFIX
        elector = leasing.elector(api, args, name=lease_name, owner=owners.from_token(conn.token))
        sched = loop.Scheduler(
            api,
            conf,
            period=args.period,
            elector=elector,
            metrics_port=args.metrics_port,
            metrics_host=args.metrics_host,
            write_api=writer,
            status_qps=args.status_qps,
            status_burst=args.status_burst,
        )
        task = asyncio.create_task(sched.run())
        stop = asyncio.Event()
        running = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            running.add_signal_handler(sig, stop.set)
        await asyncio.wait([task, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
