"""Leader-election flags and the Elector they ask for, the same for every command that elects.

``add_arguments(p, what=...)`` adds ``--leader-elect``, ``--lease-namespace`` (default: the pod's
namespace, ``$POD_NAMESPACE``, else kube-system) and the hidden timing flags tests shorten;
``elector(api, args, name=...)`` builds the ``bridge.k8s.lease.Elector`` when ``--leader-elect``
was given, with this process's identity (host name and pid, as client-go's examples do), the
Lease owned by ``owner`` (the process's ServiceAccount, :mod:`bridge.k8s.owners`) when given.
"""

from __future__ import annotations

import argparse
import os
import socket

from bridge import defaults
from bridge.k8s import client, lease, owners

__all__ = ["add_arguments", "elector"]


def add_arguments(p: argparse.ArgumentParser, *, what: str) -> None:
    p.add_argument("--leader-elect", action="store_true", help=f"{what} only while holding a Lease")
    p.add_argument("--lease-namespace", default=None, help="default: $POD_NAMESPACE, else kube-system")
    p.add_argument("--lease-duration", type=float, default=defaults.LEASE_SECONDS, help=argparse.SUPPRESS)
    p.add_argument("--renew-deadline", type=float, default=defaults.RENEW_SECONDS, help=argparse.SUPPRESS)
    p.add_argument("--retry-period", type=float, default=defaults.RETRY_SECONDS, help=argparse.SUPPRESS)


def elector(
    api: client.Client, args: argparse.Namespace, *, name: str, owner: owners.Owner | None = None
) -> lease.Elector | None:
    if not args.leader_elect:
        return None
    namespace = args.lease_namespace or defaults.pod_namespace()
    return lease.Elector(
        api,
        name=name,
        identity=f"{socket.gethostname()}_{os.getpid()}",
        namespace=namespace,
        owner=owner.reference(namespace) if owner else None,
        lease_seconds=args.lease_duration,
        renew_seconds=args.renew_deadline,
        retry_seconds=args.retry_period,
    )
