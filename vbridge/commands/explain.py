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
list of them with ``--all-pending`` (``-o yaml``: the same as YAML); an error is
``{"error": "..."}`` on stdout and exit status 1. The text form prints errors as every command
does: one line on stderr, status 2 for a malformed target, 1 for anything else.

The kinds listed are the scheduler cache's (``scheduler.io.cache.KINDS``); one GET each, no
watch, so the answer reflects one moment. The explanation itself is :mod:`scheduler.tools.explain`.

``--backend native``: the groups are read as that backend's scheduler reads them, and the
verdict says which side the group waits on (:mod:`scheduler.tools.sides`): our queue gate (and
why), or kube-scheduler, quoting the native PodGroup's ``PodGroupInitiallyScheduled``
condition, listed from ``scheduling.k8s.io/v1beta1`` (one more GET).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
from collections.abc import Mapping
from typing import Any

import yaml

from bridge import defaults, errors
from bridge.k8s import client, kubeconfigs, paths
from bridge.native import workloads as workloads_api
from scheduler.api import building
from scheduler.framework import config
from scheduler.io import cache
from scheduler.tools import explain, report, sides, workloads
from vbridge.commands import connecting, output
from vbridge.commands import scheduler as command

__all__ = ["add_parser", "fetch", "listing", "main", "native_conditions", "targets", "text"]

WAITING = ("Pending", "Inqueue")
EXAMPLES = """examples:
  vbridge explain tfjob/mnist -n team-a       # the PodGroup of a TFJob
  vbridge explain pg/spark-pi-pg              # a PodGroup, in the context's namespace
  vbridge explain --all-pending -A -o json    # every waiting group, as JSON
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``explain`` on ``parser.add_subparsers()``'s result."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "explain",
        help="explain why a workload's PodGroup waits (or can never run here)",
        description="Why a workload's PodGroup waits, from the scheduler's own cycle on the cluster's objects.",
        epilog=EXAMPLES,
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
    p.add_argument("-o", "--output", choices=("text", "json", "yaml"), default="text", help="text, json or yaml")
    p.add_argument("--json", dest="output", action="store_const", const="json", help="same as -o json")
    connecting.add_arguments(p)
    command.add_backend(p, "the scheduler whose groups to explain")
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
            raise errors.BridgeError(output.describe(exc, f"listing {plural}")) from None
        except client.TRANSPORT_ERRORS as exc:
            raise errors.BridgeError(output.describe(exc, f"listing {plural}")) from None

    kinds = list(cache.KINDS)
    lists = await asyncio.gather(*(one(kind) for kind in kinds))
    return dict(zip(kinds, lists, strict=True))


def targets(args: argparse.Namespace, namespace: str) -> tuple[str, str, str]:
    """(kind, namespace, name) named by the positional arguments."""
    words = list(args.target)
    if len(words) == 1 and "/" in words[0]:
        head, _, rest = words[0].partition("/")
        words = [head, rest] if head.lower() in workloads.KINDS else ["podgroup", words[0]]
    if len(words) != 2:
        raise errors.UsageError("expected KIND/NAME (or KIND NAME, or podgroup NS/NAME), or --all-pending")
    kind, name = words
    if kind.lower() not in workloads.KINDS:
        raise errors.UsageError(f"unknown kind {kind!r}; one of {', '.join(sorted(workloads.KINDS))}")
    if "/" in name:  # NS/NAME, as before
        namespace, _, name = name.partition("/")
    if not name:
        raise errors.UsageError("expected a name after the kind")
    return kind, namespace, name


def text(
    args: argparse.Namespace,
    objects: Mapping[str, Any],
    conf: config.SchedulerConfig,
    namespace: str,
    now: datetime.datetime,
    native: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """What the command prints, from the listed objects (raises on errors); ``native``: the
    native PodGroups' ``PodGroupInitiallyScheduled`` conditions by "namespace/name"."""
    snap = building.build(**objects, scheduler_name=conf.scheduler_name, native=conf.backend == defaults.NATIVE)
    conditions = native or {}
    if args.all_pending:
        keys = sorted(
            key
            for key, job in snap.jobs.items()
            if job.phase in WAITING and (args.all_namespaces or job.namespace == namespace)
        )
        found = [
            sides.attribute(e, conf, conditions.get(e.podgroup)) for e in explain.explain_all(snap, conf, keys, now)
        ]
        if args.output != "text":
            return _structured(args, [report.to_json(e) for e in found])
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
    result = sides.attribute(explain.explain(snap, conf, key, now), conf, conditions.get(key))
    return _structured(args, report.to_json(result)) if args.output != "text" else report.render(result)


def _structured(args: argparse.Namespace, value: Any) -> str:
    if args.output == "yaml":
        return yaml.safe_dump(value, sort_keys=False).rstrip("\n")
    return json.dumps(value, indent=2)


def listing(conn: kubeconfigs.Connection) -> dict[str, list[dict[str, Any]]]:
    """``fetch`` over a connection of its own."""

    async def listed() -> dict[str, list[dict[str, Any]]]:
        async with client.Client(conn) as api:
            return await fetch(api)

    return asyncio.run(listed())


NATIVE_CONDITION = "PodGroupInitiallyScheduled"


def native_conditions(conn: kubeconfigs.Connection) -> dict[str, dict[str, Any]]:
    """Every native PodGroup's ``PodGroupInitiallyScheduled`` condition, by "namespace/name"
    (empty when the Workload API is not served)."""

    async def listed() -> list[dict[str, Any]]:
        async with client.Client(conn) as api:
            try:
                body = await api.request("GET", paths.resource(workloads_api.API, "podgroups"))
            except errors.ApiError as exc:
                if exc.status == 404:
                    return []
                raise errors.BridgeError(output.describe(exc, "listing native podgroups")) from None
            return list(body.get("items") or [])

    out = {}
    for pg in asyncio.run(listed()):
        meta = pg.get("metadata") or {}
        found = next(
            (c for c in (pg.get("status") or {}).get("conditions") or [] if c.get("type") == NATIVE_CONDITION), None
        )
        if found is not None:
            out[f"{meta.get('namespace', '')}/{meta.get('name', '')}"] = found
    return out


def main(args: argparse.Namespace) -> int:
    try:
        if not args.all_pending:
            targets(args, connecting.DEFAULT_NAMESPACE)  # a malformed target fails before any request
        conf = command.load_config(args.conf, args.scheduler_name, args.backend)
        namespace = connecting.namespace(args)
        conn = connecting.connection(args)
        objects = listing(conn)
        native = native_conditions(conn) if conf.backend == defaults.NATIVE else None
        out = text(args, objects, conf, namespace, datetime.datetime.now(datetime.UTC), native)
    except (errors.BridgeError, OSError) as exc:
        if args.output == "text":
            raise
        print(_structured(args, {"error": str(exc)}))
        return 1
    print(out)
    return 0
