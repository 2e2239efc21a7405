"""``vbridge controllers``: the reconcilers (and the webhook certificate), behind a Lease.

With ``--leader-elect`` only the holder of the Lease reconciles; the others keep their facts
synced and wait. ``/healthz`` (alive, the Lease loop running) and ``/readyz`` (facts synced,
a standby too) on ``--health-host:--health-port``. ``--manage-certs``: the leader keeps the
webhook's serving certificate and CA in a Secret and the CA in the webhooks' caBundle
(``vbridge.controllers.certs``). SIGTERM: the reconcilers stop, then the Lease is handed back
so a standby takes over at once; exit 0.

``$POD_NAMESPACE`` (the chart sets it from the downward API) is the default of
``--lease-namespace`` and ``--webhook-namespace``, else ``bridge.defaults.SYSTEM_NAMESPACE``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import logging
import os
import pathlib
import signal
from typing import Any

import uvloop

from bridge import defaults, errors
from bridge.k8s import client, kubeconfigs, owners
from vbridge import runtime
from vbridge.commands import backends as backend_option
from vbridge.commands import connecting, leasing
from vbridge.controllers import certs as cert_controller

__all__ = ["add_parser", "build", "main", "namespaces"]


def _seconds(text: str) -> datetime.timedelta:
    return datetime.timedelta(seconds=float(text))


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "controllers", help="run the reconcilers (and the webhook certificate) while holding a Lease"
    )
    connecting.add_arguments(p)
    p.add_argument("--scheduler-name", default=defaults.SCHEDULER_NAME, help="the schedulerName of the PodGroups' pods")
    p.add_argument(
        "--templates",
        default=os.environ.get("VBRIDGE_TEMPLATES", str(runtime.TEMPLATES)),
        help="folder of PodGroup templates (default: $VBRIDGE_TEMPLATES, else the source tree's)",
    )
    leasing.add_arguments(p, what="reconcile")
    p.add_argument("--lease-name", default=defaults.CONTROLLERS_LEASE, help="the Lease of --leader-elect")
    p.add_argument("--health-host", default=defaults.HEALTH_HOST, help="listen address of /healthz and /readyz")
    p.add_argument("--health-port", type=int, default=defaults.HEALTH_PORT, help="/healthz and /readyz (0: any)")
    backend_option.add_argument(p)
    p.add_argument("--no-vcjobs", action="store_true", help="leave Volcano Jobs to Volcano's own controller")
    p.add_argument("--manage-certs", action="store_true", help="keep the webhook's certificate and caBundle")
    p.add_argument("--cert-secret", default=None, help="kubernetes.io/tls Secret of the webhook's certificate")
    p.add_argument("--webhook-config", default=None, help="MutatingWebhookConfiguration to keep the caBundle of")
    p.add_argument("--webhook-service", default=None, help="Service of the webhook (the certificate's name)")
    p.add_argument("--webhook-namespace", default=None, help="default: $POD_NAMESPACE, else kube-system")
    # For tests: rotations in seconds, and a certificate also valid for the URL a test registers.
    p.add_argument("--cert-extra-san", action="append", default=[], help=argparse.SUPPRESS)
    p.add_argument("--ca-validity", type=_seconds, default=defaults.CA_VALIDITY, help=argparse.SUPPRESS)
    p.add_argument("--cert-validity", type=_seconds, default=defaults.SERVING_VALIDITY, help=argparse.SUPPRESS)
    p.add_argument("--cert-check-period", type=float, default=defaults.CERT_CHECK_SECONDS, help=argparse.SUPPRESS)
    p.add_argument("-v", "--verbose", action="store_true", help="debug logs")
    p.set_defaults(func=main)
    return p


def namespaces(args: argparse.Namespace) -> tuple[str, str]:
    """(Lease namespace, webhook namespace): the flags, else $POD_NAMESPACE, else kube-system."""
    here = defaults.pod_namespace()
    return args.lease_namespace or here, args.webhook_namespace or here


def build(api: client.Client, args: argparse.Namespace, owner: owners.Owner | None = None) -> runtime.Controllers:
    """The composition ``args`` ask for (nothing runs yet); what it makes at run time (its Lease,
    the certificate Secret) is owned by ``owner``, the ServiceAccount it runs as."""
    _, webhook_ns = namespaces(args)
    elector = leasing.elector(api, args, name=args.lease_name, owner=owner)
    manager = None
    if args.manage_certs:
        missing = [f for f in ("cert_secret", "webhook_config", "webhook_service") if not getattr(args, f)]
        if missing:
            flags = ", ".join("--" + f.replace("_", "-") for f in missing)
            raise errors.ConfigError(f"--manage-certs needs {flags}")
        manager = cert_controller.Manager(
            api,
            secret=args.cert_secret,
            namespace=webhook_ns,
            webhook_config=args.webhook_config,
            service=args.webhook_service,
            extra_hosts=tuple(args.cert_extra_san),
            ca_validity=args.ca_validity,
            ca_renew_before=args.ca_validity / 3,
            serving_validity=args.cert_validity,
            serving_renew_before=args.cert_validity / 3,
            period=args.cert_check_period,
            owner=owner.reference(webhook_ns) if owner else None,
        )
    return runtime.Controllers(
        api,
        scheduler_name=args.scheduler_name,
        templates_dir=pathlib.Path(args.templates),
        elector=elector,
        vcjobs=not args.no_vcjobs,
        backend=args.backend,
        certs=manager,
        health=(args.health_host, args.health_port),
    )


def main(args: argparse.Namespace) -> int:
    conn = connecting.connection(args)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(relativeCreated)7.0fms %(levelname)s %(name)s: %(message)s",
    )
    uvloop.run(_run(conn, args))
    return 0


async def _run(conn: kubeconfigs.Connection, args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with client.Client(conn, connections=32, user_agent=defaults.CONTROLLERS_USER_AGENT) as api:
        task = asyncio.create_task(build(api, args, owners.from_token(conn.token)).run())
        await asyncio.wait([task, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
