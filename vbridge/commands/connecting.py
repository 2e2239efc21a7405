"""The connection flags of every command that talks to a cluster, and the connection they name.

``--kubeconfig`` and ``--context`` mean what they mean to kubectl; the search order when neither
is given is :func:`bridge.k8s.kubeconfigs.resolve`'s.
"""

from __future__ import annotations

import argparse

from bridge.k8s import kubeconfigs

__all__ = ["add_arguments", "connection"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig",
        default=None,
        help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the pod's service account)",
    )
    parser.add_argument("--context", default=None, help="kubeconfig context (default: its current-context)")


def connection(args: argparse.Namespace) -> kubeconfigs.Connection:
    return kubeconfigs.resolve(args.kubeconfig, context=args.context)
