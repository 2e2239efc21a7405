"""The connection flags of every command that talks to a cluster, the connection and the namespace they name.

``--kubeconfig`` and ``--context`` mean what they mean to kubectl; the search order when neither
is given is :func:`bridge.k8s.kubeconfigs.resolve`'s. :func:`namespace` is kubectl's default
namespace: ``-n``, else the chosen context's ``namespace``, else the pod's (in a cluster), else
``default``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
from collections.abc import Mapping

from bridge import errors, inputs
from bridge.k8s import kubeconfigs

__all__ = ["DEFAULT_NAMESPACE", "add_arguments", "connection", "context_namespace", "namespace"]

DEFAULT_NAMESPACE = "default"  # Kubernetes' own, as kubectl falls back to it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig",
        default=None,
        help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the pod's service account)",
    )
    parser.add_argument("--context", default=None, help="kubeconfig context (default: its current-context)")


def connection(args: argparse.Namespace) -> kubeconfigs.Connection:
    return kubeconfigs.resolve(args.kubeconfig, context=args.context)


def namespace(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> str:
    """``-n``, else the context's namespace (:func:`context_namespace`)."""
    return str(getattr(args, "namespace", None) or context_namespace(args, env))


def context_namespace(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> str:
    """The namespace of the kubeconfig context kubectl would use, else the pod's, else default."""
    env = os.environ if env is None else env
    files = [pathlib.Path(args.kubeconfig)] if args.kubeconfig else []
    if not files and env.get("KUBECONFIG"):
        files = [pathlib.Path(p) for p in env["KUBECONFIG"].split(os.pathsep) if p]
    if not files:
        files = [pathlib.Path(env.get("HOME") or pathlib.Path.home()) / ".kube" / "config"]
    docs = []
    for path in files:
        try:
            doc = inputs.yaml_document(str(path), inputs.read(str(path)).decode()) if path.is_file() else None
        except (errors.InputError, UnicodeDecodeError):
            doc = None
        if isinstance(doc, dict):
            docs.append(doc)
    current = args.context or next((d.get("current-context") for d in docs if d.get("current-context")), None)
    for doc in docs:
        for item in doc.get("contexts") or []:
            if isinstance(item, dict) and item.get("name") == current:
                return str((item.get("context") or {}).get("namespace") or DEFAULT_NAMESPACE)
    if not docs:
        try:
            return (kubeconfigs.SERVICE_ACCOUNT / "namespace").read_text().strip() or DEFAULT_NAMESPACE
        except OSError:
            pass
    return DEFAULT_NAMESPACE
