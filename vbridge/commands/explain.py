"""``vbridge explain KIND/NAME``: why a workload's PodGroup waits. List the cluster once, explain, print.

Targets: ``pg|podgroup/NAME``, ``tfjob/NAME``, ``pytorchjob/NAME``, ``mpijob/NAME``,
``sparkapplication|sparkapp/NAME``, ``vcjob|job.batch.volcano.sh/NAME`` (also as two words,
``tfjob NAME``), found through :func:`scheduler.tools.explain.resolve` (the PodGroup the object
owns, else the name its controller gives it: ``<job>-<uid>`` for a Volcano Job,
``spark-<app>-pg`` for a SparkApplication). ``-n NS`` picks the namespace (default: the
kubeconfig context's namespace, else ``default``); ``podgroup NS/NAME`` and ``NS/NAME`` still
work. ``--all-pending`` explains every Pending or Inqueue PodGroup of the namespace (of all
namespaces with ``-A``).

``-o json`` prints :func:`scheduler.tools.report.to_json`'s object (schema in that module), a
list of them with ``--all-pending``; an error is ``{"error": "..."}`` on stdout and exit
status 1. The text form prints errors as every command does (stderr, status 2).

The kinds listed are the scheduler cache's (``scheduler.io.cache.KINDS``); one GET each, no
watch, so the answer reflects one moment. The explanation itself is :mod:`scheduler.tools.explain`.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import pathlib
from collections.abc import Mapping
from typing import Any

import yaml

from bridge import defaults, errors
from bridge.k8s import client, kubeconfigs, paths
from scheduler.api import building
from scheduler.framework import config
from scheduler.io import cache
from scheduler.tools import explain, report, workloads
from vbridge.commands import connecting
from vbridge.commands import scheduler as command

__all__ = ["add_parser", "context_namespace", "fetch", "listing", "main", "targets", "text"]

WAITING = ("Pending", "Inqueue")
DEFAULT_NAMESPACE = "default"  # Kubernetes' own, as kubectl falls back to it


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``explain`` on ``parser.add_subparsers()``'s result."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "explain", help="explain why a workload's PodGroup waits (or can never run here)"
    )
    p.add_argument(
        "target",
        nargs="*",
        metavar="KIND/NAME",
        help=f"kind one of {', '.join(sorted(workloads.KINDS))}; or KIND NAME; or podgroup NS/NAME",
    )
    p.add_argument("-n", "--namespace", default=None, help="namespace (default: the context's, else default)")
    p.add_argument("-A", "--all-namespaces", action="store_true", help="with --all-pending: every namespace")
    p.add_argument("--all-pending", action="store_true", help="every Pending or Inqueue PodGroup")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text")
    p.add_argument("--json", dest="output", action="store_const", const="json", help="same as -o json")
    connecting.add_arguments(p)
    p.add_argument("--scheduler-name", default=defaults.SCHEDULER_NAME)
    p.add_argument("--conf", default=None, help="volcano-scheduler.conf (default: Volcano's defaults)")
    p.set_defaults(func=main)
    return p


async def fetch(api: client.Client) -> dict[str, list[dict[str, Any]]]:
    """Every object ``building.build`` reads, one list call per kind."""

    async def one(kind: str) -> list[dict[str, Any]]:
        api_version, plural = cache.KINDS[kind]
        try:
            return list((await api.request("GET", paths.resource(api_version, plural))).get("items") or [])
        except errors.ApiError as exc:
            if exc.status == 404 and kind != "nodes" and kind != "pods":
                return []  # CRDs not installed: no groups, no queues
            raise

    kinds = list(cache.KINDS)
    lists = await asyncio.gather(*(one(kind) for kind in kinds))
    return dict(zip(kinds, lists, strict=True))


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
            doc = yaml.safe_load(path.read_text()) if path.is_file() else None
        except (OSError, yaml.YAMLError):
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


def targets(args: argparse.Namespace, namespace: str) -> tuple[str, str, str]:
    """(kind, namespace, name) named by the positional arguments."""
    words = list(args.target)
    if len(words) == 1 and "/" in words[0]:
        head, _, rest = words[0].partition("/")
        words = [head, rest] if head.lower() in workloads.KINDS else ["podgroup", words[0]]
    if len(words) != 2:
        raise errors.ConfigError("expected KIND/NAME (or KIND NAME, or podgroup NS/NAME), or --all-pending")
    kind, name = words
    if kind.lower() not in workloads.KINDS:
        raise errors.ConfigError(f"unknown kind {kind!r}; one of {', '.join(sorted(workloads.KINDS))}")
    if "/" in name:  # NS/NAME, as before
        namespace, _, name = name.partition("/")
    if not name:
        raise errors.ConfigError("expected a name after the kind")
    return kind, namespace, name


def text(
    args: argparse.Namespace,
    objects: Mapping[str, Any],
    conf: config.SchedulerConfig,
    namespace: str,
    now: datetime.datetime,
) -> str:
    """What the command prints, from the listed objects (raises on errors)."""
    snap = building.build(**objects, scheduler_name=conf.scheduler_name)
    if args.all_pending:
        keys = sorted(
            key
            for key, job in snap.jobs.items()
            if job.phase in WAITING and (args.all_namespaces or job.namespace == namespace)
        )
        found = explain.explain_all(snap, conf, keys, now)
        if args.output == "json":
            return json.dumps([report.to_json(e) for e in found], indent=2)
        where = "any namespace" if args.all_namespaces else f"namespace {namespace}"
        return "\n\n".join(report.render(e) for e in found) or f"no Pending or Inqueue PodGroup in {where}"
    kind, namespace, name = targets(args, namespace)
    try:
        key = workloads.resolve(snap, kind, namespace, name)
    except errors.BridgeError as exc:
        first = args.target[0]
        if len(args.target) == 1 and first.partition("/")[0].lower() not in workloads.KINDS:
            kinds = ", ".join(sorted(workloads.KINDS))
            raise errors.ConfigError(f"{exc}; {first!r} was read as NAMESPACE/NAME (kinds: {kinds})") from exc
        raise
    result = explain.explain(snap, conf, key, now)
    return json.dumps(report.to_json(result), indent=2) if args.output == "json" else report.render(result)


def listing(conn: kubeconfigs.Connection) -> dict[str, list[dict[str, Any]]]:
    """``fetch`` over a connection of its own."""

    async def listed() -> dict[str, list[dict[str, Any]]]:
        async with client.Client(conn) as api:
            return await fetch(api)

    return asyncio.run(listed())


def main(args: argparse.Namespace) -> int:
    try:
        if not args.all_pending:
            targets(args, DEFAULT_NAMESPACE)  # a malformed target fails before any request
        conf = command.load_config(args.conf, args.scheduler_name)
        namespace = args.namespace or context_namespace(args)
        objects = listing(connecting.connection(args))
        out = text(args, objects, conf, namespace, datetime.datetime.now(datetime.UTC))
    except (errors.BridgeError, OSError) as exc:
        if args.output != "json":
            raise
        print(json.dumps({"error": str(exc)}))
        return 1
    print(out)
    return 0
