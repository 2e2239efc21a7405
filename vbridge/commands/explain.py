"""``vbridge explain KIND/NAME``: why a workload's PodGroup waits. List the cluster once, explain, print.

Targets: ``pg|podgroup/NAME`` or a job kind by any of its registered names
(:func:`scheduler.tools.workloads.kinds`: ``tfjob/NAME``, ``mpijob/NAME``, ``sparkapp/NAME``,
``vcjob/NAME``, …; also as two words, ``tfjob NAME``), found through
:func:`scheduler.tools.workloads.resolve` (the PodGroup the object owns, else the name its
controller gives it: ``<job>-<uid>`` for a Volcano Job, ``spark-<app>-pg`` for a
SparkApplication). ``-n NS`` picks the namespace (default: the kubeconfig context's namespace,
else ``default``); ``podgroup NS/NAME`` and ``NS/NAME`` still work. ``--all-pending`` explains
every Pending or Inqueue PodGroup of the namespace (of all namespaces with ``-A``).

``-o json`` prints :func:`scheduler.tools.report.to_json`'s object (schema in that module), a
list of them with ``--all-pending`` (``-o yaml``: the same as YAML); an error is
``{"error": "..."}`` on stdout and exit status 1. The text form prints errors as every command
does: one line on stderr, status 2 for a malformed target, 1 for anything else.

The kinds listed are the scheduler cache's (``scheduler.io.cache.KINDS``); one GET each, no
watch, so the answer reflects one moment. The explanation itself is :mod:`scheduler.tools.explain`.

``--backend`` (default ``auto``): :func:`detect` finds it. Volcano unless the apiserver serves
the Workload API (``bridge.k8s.backends.served``) and the cluster shows our native stamp: a pod
joined to the native PodGroup named as a Volcano PodGroup of its namespace, a native twin of
one, or a Volcano PodGroup with the native reconciler's ``keys.NATIVE_SYNCED`` condition. On
the native backend the groups are read as that backend's scheduler reads them (pods of
kube-scheduler's ``default-scheduler``), and the verdict says which side the group waits on
(:mod:`scheduler.tools.sides`): our queue gate (and why); kube-scheduler, quoting the native
PodGroup's ``PodGroupInitiallyScheduled`` condition, listed from ``scheduling.k8s.io/v1beta1``
(one more GET); or neither, when the apiserver refused the native twin (the refusal quoted).
Every request goes through one client, under :func:`vbridge.commands.interrupts.run`.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
from collections.abc import Mapping
from typing import Any

import yaml

from bridge import defaults, errors, keys
from bridge.k8s import backends, client, kubeconfigs, paths
from bridge.native import workloads as native_workloads
from scheduler.api import building
from scheduler.framework import config
from scheduler.io import cache as sched_cache
from scheduler.tools import explain, report, sides, workloads
from vbridge.commands import connecting, interrupts, output
from vbridge.commands import scheduler as scheduler_command

__all__ = [
    "EXAMPLES",
    "NATIVE_CONDITION",
    "WAITING",
    "add_parser",
    "detect",
    "fetch",
    "gather",
    "main",
    "native_conditions",
    "read",
    "targets",
    "text",
]

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
        help=f"kind one of {', '.join(sorted(workloads.kinds()))}; or KIND NAME; or podgroup NS/NAME",
    )
    p.add_argument("-n", "--namespace", default=None, help="namespace (default: the context's, else default)")
    p.add_argument("-A", "--all-namespaces", action="store_true", help="with --all-pending: every namespace")
    p.add_argument("--all-pending", action="store_true", help="every Pending or Inqueue PodGroup")
    p.add_argument("-o", "--output", choices=("text", "json", "yaml"), default="text", help="text, json or yaml")
    p.add_argument("--json", dest="output", action="store_const", const="json", help="same as -o json")
    connecting.add_arguments(p)
    scheduler_command.add_backend(p, "the scheduler whose groups to explain", auto=True)
    p.add_argument("--conf", default=None, help="volcano-scheduler.conf (default: Volcano's defaults)")
    p.set_defaults(func=main)
    return p


async def fetch(api: client.Client) -> dict[str, list[dict[str, Any]]]:
    """Every object ``building.build`` reads, one list call per kind."""

    async def one(kind: str) -> list[dict[str, Any]]:
        api_version, plural = sched_cache.KINDS[kind]
        try:
            return list((await api.request("GET", paths.resource(api_version, plural))).get("items") or [])
        except errors.ApiError as exc:
            if exc.status == 404 and kind != "nodes" and kind != "pods":
                return []  # CRDs not installed: no groups, no queues
            raise errors.BridgeError(output.describe(exc, f"listing {plural}")) from None
        except client.TRANSPORT_ERRORS as exc:
            raise errors.BridgeError(output.describe(exc, f"listing {plural}")) from None

    kinds = list(sched_cache.KINDS)
    lists = await asyncio.gather(*(one(kind) for kind in kinds))
    return dict(zip(kinds, lists, strict=True))


def targets(args: argparse.Namespace, namespace: str) -> tuple[str, str, str]:
    """(kind, namespace, name) named by the positional arguments."""
    words = list(args.target)
    if len(words) == 1 and "/" in words[0]:
        head, _, rest = words[0].partition("/")
        words = [head, rest] if head.lower() in workloads.kinds() else ["podgroup", words[0]]
    if len(words) != 2:
        raise errors.UsageError("expected KIND/NAME (or KIND NAME, or podgroup NS/NAME), or --all-pending")
    kind, name = words
    if kind.lower() not in workloads.kinds():
        raise errors.UsageError(f"unknown kind {kind!r}; one of {', '.join(sorted(workloads.kinds()))}")
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
        if len(args.target) == 1 and first.partition("/")[0].lower() not in workloads.kinds():
            kinds = ", ".join(sorted(workloads.kinds()))
            raise errors.ConfigError(f"{exc}; {first!r} was read as NAMESPACE/NAME (kinds: {kinds})") from exc
        raise
    result = sides.attribute(explain.explain(snap, conf, key, now), conf, conditions.get(key))
    return _structured(args, report.to_json(result)) if args.output != "text" else report.render(result)


def _structured(args: argparse.Namespace, value: Any) -> str:
    if args.output == "yaml":
        return yaml.safe_dump(value, sort_keys=False).rstrip("\n")
    return json.dumps(value, indent=2)


def gather(
    conn: kubeconfigs.Connection, backend: str
) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]] | None, str]:
    """:func:`read` over a connection of its own."""

    async def listed() -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]] | None, str]:
        async with client.Client(conn) as api:
            return await read(api, backend)

    return interrupts.run(listed())


NATIVE_CONDITION = "PodGroupInitiallyScheduled"


async def _native_podgroups(api: client.Client) -> list[dict[str, Any]]:
    try:
        body = await api.request("GET", paths.resource(native_workloads.API, "podgroups"))
    except errors.ApiError as exc:
        if exc.status == 404:
            return []
        raise errors.BridgeError(output.describe(exc, "listing native podgroups")) from None
    return list(body.get("items") or [])


async def read(
    api: client.Client, backend: str
) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]] | None, str]:
    """(the scheduler's objects, the native PodGroups or None, the backend): ``backend`` as
    given, ``auto`` found by :func:`detect`; the native list only when the API is served."""
    objects = await fetch(api)
    try:
        served = backend != defaults.BACKEND and await backends.served(api)
    except errors.ApiError as exc:
        raise errors.BridgeError(output.describe(exc, f"reading {native_workloads.API}")) from None
    native = await _native_podgroups(api) if served else None
    if backend == "auto":
        backend = detect(objects, native or []) if served else defaults.BACKEND
    return objects, native, backend


def detect(objects: Mapping[str, list[dict[str, Any]]], native: list[dict[str, Any]]) -> str:
    """native when something shows our native stamp on a Volcano PodGroup (see the module), else
    volcano. Pure."""
    groups = {(_meta(pg).get("namespace"), _meta(pg).get("name")) for pg in objects.get("podgroups") or []}
    refused = any(
        c.get("type") == keys.NATIVE_SYNCED
        for pg in objects.get("podgroups") or []
        for c in (pg.get("status") or {}).get("conditions") or []
    )
    twins = any((_meta(pg).get("namespace"), _meta(pg).get("name")) in groups for pg in native)
    joined = any(
        (_meta(pod).get("namespace"), ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName"))
        in groups
        for pod in objects.get("pods") or []
    )
    return defaults.NATIVE if refused or twins or joined else defaults.BACKEND


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def native_conditions(
    objects: Mapping[str, list[dict[str, Any]]], native: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Per "namespace/name": the Volcano PodGroup's ``keys.NATIVE_SYNCED`` condition (its native
    twin was refused), else the native PodGroup's ``PodGroupInitiallyScheduled`` condition."""
    out = {}
    for pg in native:
        found = next(
            (c for c in (pg.get("status") or {}).get("conditions") or [] if c.get("type") == NATIVE_CONDITION), None
        )
        if found is not None:
            out[f"{_meta(pg).get('namespace', '')}/{_meta(pg).get('name', '')}"] = found
    for pg in objects.get("podgroups") or []:
        for c in (pg.get("status") or {}).get("conditions") or []:
            if c.get("type") == keys.NATIVE_SYNCED and c.get("status") == "False":
                out[f"{_meta(pg).get('namespace', '')}/{_meta(pg).get('name', '')}"] = c
    return out


def main(args: argparse.Namespace) -> int:
    try:
        if not args.all_pending:
            targets(args, connecting.DEFAULT_NAMESPACE)  # a malformed target fails before any request
        scheduler_command.load_config(
            args.conf, args.scheduler_name
        )  # a conf that cannot be read fails before any request
        namespace = connecting.namespace(args)
        conn = connecting.connection(args)
        objects, native, backend = gather(conn, args.backend)
        conf = scheduler_command.load_config(args.conf, args.scheduler_name, backend)
        conditions = native_conditions(objects, native) if native is not None else None
        out = text(args, objects, conf, namespace, datetime.datetime.now(datetime.UTC), conditions)
    except (errors.BridgeError, OSError) as exc:
        if args.output == "text":
            raise
        print(_structured(args, {"error": str(exc)}))
        return 1
    print(out)
    return 0
