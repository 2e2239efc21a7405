"""``vbridge serve``: the admission webhook (and, without ``--webhook-only``, the reconcilers).

The Helm chart runs ``serve --webhook-only`` (the facts cache and the HTTPS server; the
reconcilers run in ``vbridge controllers``, behind a Lease); ``vbridge up`` and the tests run
both in one process. The server reloads its certificate when the files change. SIGTERM: stop
accepting, finish the reviews in flight, exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import pathlib
import signal
from typing import Any

import uvloop

from bridge import defaults, errors
from bridge.k8s import client, kubeconfigs
from vbridge import runtime
from vbridge.commands import backends as backend_option
from vbridge.commands import connecting
from webhooks import server

__all__ = ["add_parser", "bridge", "main", "settings"]


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help="run the admission webhook and the PodGroup reconcilers")
    connecting.add_arguments(p)
    p.add_argument("--host", default="127.0.0.1", help="listen address (the chart passes 0.0.0.0)")
    p.add_argument("--port", type=int, default=9443, help="HTTPS port of the webhook")
    p.add_argument("--tls-cert", required=True, help="serving certificate (e.g. mounted from cert-manager)")
    p.add_argument("--tls-key", required=True, help="its private key")
    p.add_argument(
        "--client-ca",
        help="require a client certificate signed by this CA: the apiserver's admission client certificate "
        "(its --admission-control-config-file kubeconfig for this webhook); without one the handshake fails",
    )
    p.add_argument(
        "--scheduler-name", default=defaults.SCHEDULER_NAME, help="the schedulerName stamped on gang-scheduled pods"
    )
    backend_option.add_argument(p)
    p.add_argument(
        "--header-timeout",
        type=float,
        default=defaults.HEADER_TIMEOUT_SECONDS,
        help="seconds from accept to a complete request head, TLS handshake included (default %(default)s)",
    )
    p.add_argument(
        "--max-header-bytes",
        type=int,
        default=defaults.MAX_HEADER_BYTES,
        help="larger request heads are answered 431 (default %(default)s)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=defaults.MAX_CONNECTIONS,
        help="connections that have sent a request (the apiserver's); when all are held, the longest idle "
        "is closed for a new request, or it is answered 503 (default %(default)s)",
    )
    p.add_argument(
        "--max-pending-connections",
        type=int,
        default=defaults.MAX_PENDING_CONNECTIONS,
        help="connections before their first request head; when full, the oldest is closed (default %(default)s)",
    )
    p.add_argument(
        "--review-threads",
        type=int,
        default=defaults.HEAVY_REVIEWS,
        help=f"worker threads for reviews over {defaults.OFFLOOP_REVIEW_BYTES} bytes (default %(default)s)",
    )
    p.add_argument(
        "--templates",
        default=os.environ.get("VBRIDGE_TEMPLATES", str(runtime.TEMPLATES)),
        help="folder of PodGroup templates (default: $VBRIDGE_TEMPLATES, else the source tree's)",
    )
    p.add_argument(
        "--webhook-only",
        action="store_true",
        help="serve admission only: no reconcilers (they run in `vbridge controllers`)",
    )
    p.add_argument("--tls-reload-seconds", type=float, default=defaults.TLS_RELOAD_SECONDS, help=argparse.SUPPRESS)
    p.add_argument("-v", "--verbose", action="store_true", help="debug logs")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    conn = connecting.connection(args)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    # uvloop: the admission path is latency-bound; it roughly halves the event loop's overhead.
    uvloop.run(
        _run(conn, settings(args), pathlib.Path(args.templates), reconcile=not args.webhook_only, backend=args.backend)
    )
    return 0


def settings(args: argparse.Namespace) -> server.Settings:
    """The server's settings from the flags; a file that is missing or a limit that is not positive is refused."""
    for path in (args.tls_cert, args.tls_key, args.client_ca):
        if path is not None and not pathlib.Path(path).exists():
            raise errors.ConfigError(f"TLS file {path} does not exist")
    for flag, value in (
        ("--header-timeout", args.header_timeout),
        ("--max-header-bytes", args.max_header_bytes),
        ("--max-connections", args.max_connections),
        ("--max-pending-connections", args.max_pending_connections),
        ("--review-threads", args.review_threads),
    ):
        if value <= 0:
            raise errors.ConfigError(f"{flag} must be positive, got {value}")
    return server.Settings(
        host=args.host,
        port=args.port,
        certfile=pathlib.Path(args.tls_cert),
        keyfile=pathlib.Path(args.tls_key),
        scheduler_name=args.scheduler_name,
        reload_seconds=args.tls_reload_seconds,
        client_ca=pathlib.Path(args.client_ca) if args.client_ca else None,
        header_timeout=args.header_timeout,
        max_header_bytes=args.max_header_bytes,
        max_connections=args.max_connections,
        max_pending=args.max_pending_connections,
        heavy_reviews=args.review_threads,
    )


def bridge(
    api: client.Client,
    settings: server.Settings,
    templates: pathlib.Path,
    *,
    reconcile: bool,
    backend: str = defaults.BACKEND,
) -> runtime.Bridge:
    return runtime.Bridge(api, settings, templates_dir=templates, reconcile=reconcile, backend=backend)


async def _run(
    conn: kubeconfigs.Connection,
    settings: server.Settings,
    templates: pathlib.Path,
    *,
    reconcile: bool,
    backend: str,
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with client.Client(conn, user_agent=defaults.WEBHOOK_USER_AGENT) as api:
        task = asyncio.create_task(bridge(api, settings, templates, reconcile=reconcile, backend=backend).run())
        await asyncio.wait([task, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
