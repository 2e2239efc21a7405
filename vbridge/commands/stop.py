"""``vbridge stop``: the chart's pre-delete hook; the release's components stopped before Helm deletes their rights.

``helm uninstall`` deletes every object of a release in one pass (Helm's ``UninstallOrder``:
Deployments, then RoleBindings, Roles, ClusterRoleBindings, ClusterRoles, ..., ServiceAccounts;
each a DELETE, none waited for), so the rights of a component go while its pods still run: its
standbys poll their Lease and its leader hands the Lease back after that, and are refused (403).
Helm runs ``pre-delete`` hooks to completion before that pass; this command is the chart's:

1. deletes each ``--webhook-config`` (MutatingWebhookConfiguration) first, so no admission is
   sent to a webhook that is about to stop (their ``failurePolicy`` is ``Fail``);
2. deletes each ``--deployment`` with foreground propagation (the Deployment stays, marked
   deleted, until its ReplicaSets and their pods are gone: every process has had its SIGTERM,
   released its Lease and exited) and waits, reading each back every ``--poll`` seconds, until
   none exists, at most ``--timeout`` seconds.

Missing objects are done already (a re-run, or a mode without that component). Exit 0 when
everything is gone, 1 on the timeout or an API error. Needs: ``delete`` on those webhook
configurations, ``delete`` and ``get`` on those Deployments (by name: the chart's hook Role).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
from typing import Any

import uvloop

from bridge import defaults, errors
from bridge.k8s import client, paths, writes
from vbridge.commands import connecting, interrupts

__all__ = ["APPS", "WEBHOOKS", "add_parser", "main", "stop"]

log = logging.getLogger(__name__)

WEBHOOKS = "admissionregistration.k8s.io/v1"
APPS = "apps/v1"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "stop",
        help="delete a release's webhook configuration and Deployments, and wait for their pods (pre-delete hook)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    connecting.add_arguments(p)
    p.add_argument("-n", "--namespace", default=None, help="the Deployments' namespace (default: the pod's)")
    p.add_argument("--deployment", action="append", default=[], help="a Deployment to stop (repeatable)")
    p.add_argument("--webhook-config", action="append", default=[], help="a MutatingWebhookConfiguration to delete")
    p.add_argument("--timeout", type=float, default=defaults.STOP_TIMEOUT_SECONDS, help="seconds to wait at most")
    p.add_argument("--poll", type=float, default=defaults.STOP_POLL_SECONDS, help="seconds between reads")
    p.set_defaults(func=main)
    return p


def main(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    conn = connecting.connection(args)
    namespace = args.namespace or defaults.pod_namespace()

    async def run() -> None:
        async with client.Client(conn) as api:
            await stop(
                api,
                namespace=namespace,
                deployments=args.deployment,
                webhook_configs=args.webhook_config,
                timeout=args.timeout,
                poll=args.poll,
            )

    interrupts.run(run(), loop_factory=uvloop.new_event_loop)
    return 0


async def _exists(api: client.Client, path: str) -> bool:
    try:
        await api.request("GET", path)
    except errors.ApiError as exc:
        if exc.status != 404:
            raise
        return False
    return True


async def stop(
    api: client.Client,
    *,
    namespace: str,
    deployments: list[str],
    webhook_configs: list[str],
    timeout: float,
    poll: float,
) -> None:
    """Delete the webhook configurations, then the Deployments (foreground), and return once no
    Deployment is left; ``errors.WaitTimeoutError`` after ``timeout`` seconds."""
    for name in webhook_configs:
        if await writes.delete(api, paths.resource(WEBHOOKS, "mutatingwebhookconfigurations", name=name)):
            log.info("deleted the MutatingWebhookConfiguration %s", name)
    foreground = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"}
    deployment_paths = {n: paths.resource(APPS, "deployments", namespace=namespace, name=n) for n in deployments}
    for name, path in deployment_paths.items():
        if await writes.delete(api, path, foreground):
            log.info("deleting the Deployment %s/%s and its pods", namespace, name)
    deadline = time.monotonic() + timeout
    left = dict(deployment_paths)
    while left:
        left = {n: p for n, p in left.items() if await _exists(api, p)}
        if not left:
            break
        if time.monotonic() > deadline:
            raise errors.WaitTimeoutError(f"still there after {timeout:.0f} s: {', '.join(sorted(left))}")
        await asyncio.sleep(poll)
    log.info("stopped: %s", ", ".join(deployments) or "nothing")
