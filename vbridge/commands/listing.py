"""``vbridge list``: the PodGroups, Volcano Jobs and operator jobs of a namespace, in one view.

The one implementation of that view: ``vbridge list`` prints it with kubectl's conventions
(:mod:`vbridge.commands.output`), ``vbridge up`` redraws it (``vbridge.embedded``), and ``job
list`` prints the Volcano Job table with the same columns. :func:`sections` are the tables, in
order: PodGroups, Volcano Jobs, operator jobs (:func:`operator_kinds`: every registered job kind,
``bridge.adapters.registry.kinds``, at every version it has, e.g. MPIJob ``v1`` and ``v2beta1``;
their state in the operator's own words, ``Workload.state``). A version the cluster does not
serve (a 404) is left out; the same object read at two versions is shown once.

:func:`hints` says when operator jobs have no status yet: nothing has created their pods, so
their operator (``Workload.operator``) is probably not running (the bridge makes the PodGroup;
the operator the pods).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any

from bridge import defaults, errors
from bridge.adapters import registry
from bridge.adapters.vcjob import names
from bridge.k8s import client, watching
from scheduler.api import resources
from vbridge.commands import connecting, interrupts, output

__all__ = [
    "EXAMPLES",
    "PODGROUP",
    "VCJOB",
    "C",
    "Section",
    "add_parser",
    "collect",
    "hints",
    "job_state",
    "main",
    "once",
    "operator_kinds",
    "sections",
    "tables",
]


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("spec") or {}


def _status(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("status") or {}


def _amounts(resource_list: dict[str, Any] | None) -> str:
    return resources.parse(resource_list).human() if resource_list else ""


def _kind_of(obj: dict[str, Any]) -> registry.Kind | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    return next((k for k in registry.kinds() if k.kind == kind and api_version in k.api_versions), None)


def job_state(job: dict[str, Any]) -> str:
    """The state its kind's ``Workload.state`` names (a SparkApplication's applicationState), else
    the latest true condition (a Kubeflow job's, or one of no registered kind)."""
    known = _kind_of(job)
    if known is not None and known.workload.state:
        value: Any = job
        for key in known.workload.state:
            value = value.get(key) if isinstance(value, dict) else None
        return str(value or "")
    true = [c.get("type", "") for c in _status(job).get("conditions") or [] if c.get("status") == "True"]
    return str(true[-1]) if true else ""


C = output.Column
PODGROUP = output.Kind(
    "PodGroup",
    defaults.PODGROUP_API,
    "podgroups",
    (
        C("PHASE", lambda o: _status(o).get("phase") or "Pending"),
        C("MINMEMBER", lambda o: _spec(o).get("minMember", 1)),
        C("RUNNING", lambda o: _status(o).get("running", 0)),
        C("SUCCEEDED", lambda o: _status(o).get("succeeded", 0)),
        C("QUEUE", lambda o: _spec(o).get("queue", "")),
        C("FAILED", lambda o: _status(o).get("failed", 0), wide=True),
        C("MINRESOURCES", lambda o: _amounts(_spec(o).get("minResources")), wide=True),
    ),
)
VCJOB = output.Kind(
    "Job",
    names.API_VERSION,
    "jobs",
    (
        C("PHASE", lambda o: (_status(o).get("state") or {}).get("phase") or "Pending"),
        C("QUEUE", lambda o: _spec(o).get("queue", "")),
        C("MINAVAILABLE", lambda o: _spec(o).get("minAvailable", "")),
        C("RUNNING", lambda o: _status(o).get("running", 0)),
        C("SUCCEEDED", lambda o: _status(o).get("succeeded", 0)),
        C("FAILED", lambda o: _status(o).get("failed", 0)),
        C("RETRIES", lambda o: _status(o).get("retryCount", 0)),
        C("REPLICAS", lambda o: sum(int(t.get("replicas") or 0) for t in _spec(o).get("tasks") or []), wide=True),
        C("PENDING", lambda o: _status(o).get("pending", 0), wide=True),
    ),
)
_OPERATOR_COLUMNS = (C("KIND", lambda o: o.get("kind", "")), C("STATE", lambda o: job_state(o) or "-"))


def operator_kinds() -> tuple[output.Kind, ...]:
    """The operators' jobs, one ``output.Kind`` per registered kind and version: their PodGroups
    are deleted when they finish, so this table is where completion shows."""
    return tuple(
        output.Kind(k.kind, api_version, k.plural, _OPERATOR_COLUMNS)
        for k in registry.kinds()
        if k.workload.operator_table
        for api_version in k.api_versions
    )


@dataclasses.dataclass(frozen=True)
class Section:
    kinds: tuple[output.Kind, ...]
    columns: tuple[output.Column, ...]


def sections() -> tuple[Section, ...]:
    """The tables, in order: PodGroups, Volcano Jobs, the operators' jobs."""
    return (
        Section((PODGROUP,), PODGROUP.columns),
        Section((VCJOB,), VCJOB.columns),
        Section(operator_kinds(), _OPERATOR_COLUMNS),
    )


async def _items(api: client.Client, kind: output.Kind, namespace: str | None, selector: str | None) -> list[Any]:
    params = {"labelSelector": selector} if selector else None
    try:
        listed = await watching.list_objects(api, kind.path(namespace), params=params)  # skips the undecodable
    except errors.ApiError as exc:
        if exc.status == 404:
            return []  # the cluster does not serve this kind: nothing of it to show
        raise
    return output.stamped(kind, listed)


async def collect(api: client.Client, namespace: str | None, selector: str | None = None) -> list[output.Table]:
    """:func:`tables` of what the cluster holds (``namespace`` None: every namespace)."""
    kinds = [kind for section in sections() for kind in section.kinds]
    listed = await asyncio.gather(*(_items(api, kind, namespace, selector) for kind in kinds))
    return tables(once([obj for items in listed for obj in items]))


def once(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``objects`` without a repeat of a uid: one object a CRD serves at two versions is one row."""
    seen: set[str] = set()
    out = []
    for obj in objects:
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        if not uid or uid not in seen:
            out.append(obj)
            seen.add(uid)
    return out


def tables(objects: Sequence[dict[str, Any]]) -> list[output.Table]:
    """One table per section, of the ``objects`` of its kinds (each with its ``kind``), sorted by
    namespace and name."""
    out = []
    for section in sections():
        kinds = {(k.api_version, k.kind) for k in section.kinds}
        items = [obj for obj in objects if (obj.get("apiVersion"), obj.get("kind")) in kinds]
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        out.append(output.Table(section.columns, items))
    return out


def hints(tables: Sequence[output.Table]) -> list[str]:
    """One line per kind of operator job that has no status yet: its operator is probably not running."""
    operators = {k.kind: k.workload.operator for k in registry.kinds() if k.workload.operator_table}
    waiting: dict[str, int] = {}
    for t in tables:
        for obj in t.items:
            if obj.get("kind") in operators and not _status(obj):
                waiting[obj["kind"]] = waiting.get(obj["kind"], 0) + 1
    return [
        f"note: {n} {kind}(s) without status: their PodGroups wait for pods only the {operators[kind]} creates; "
        "is it running? (`vbridge up --with-operators` runs it locally)"
        for kind, n in waiting.items()
    ]


EXAMPLES = """examples:
  vbridge list                      # the context's namespace
  vbridge list -A -o wide           # every namespace, with minResources
  vbridge list -n seed -w           # then a row for every change, until Ctrl-C
  vbridge list -o name | xargs -n1 kubectl describe
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``list`` on ``parser.add_subparsers()``'s result."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "list",
        help="PodGroups, Volcano Jobs and operator jobs in one view",
        description="PodGroups, Volcano Jobs and the operators' jobs "
        f"({', '.join(dict.fromkeys(k.kind for k in operator_kinds()))}, at every version each has) "
        "with their states: the table `vbridge up` prints.",
        epilog=EXAMPLES,
    )
    output.add_namespaces(p)
    output.add_listing(p)
    connecting.add_arguments(p)
    p.set_defaults(func=main)
    return p


def main(args: argparse.Namespace) -> int:
    namespace = None if args.all_namespaces else connecting.namespace(args)
    conn = connecting.connection(args)

    async def go() -> None:
        async with client.Client(conn) as api:
            if args.watch:
                shown = sections()
                tables = [output.Table(section.columns, ()) for section in shown]
                sources = [(k, k.path(namespace), i) for i, section in enumerate(shown) for k in section.kinds]
                live = output.watch(api, tables, sources, args, namespace, output.write, optional=True)
                await output.guarded(live, "watching the jobs")
                return
            tables = await output.guarded(collect(api, namespace, args.selector), "listing the jobs")
            out, err = output.render(tables, args, namespace)
            output.write(out, False)
            output.write(err, True)
            if args.output in (None, "wide"):
                for line in hints(tables):
                    output.write(line, True)

    interrupts.run(go())
    return 0
