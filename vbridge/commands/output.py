"""kubectl's conventions for the commands people run: options, tables, ``-o``, empty lists, watches, errors.

One implementation for every listing command (``job``, ``queue``, ``list``; ``up``'s live table):

- :class:`Parser` is the ``vbridge`` parser class (subparsers are made of the same class): every
  option's help ends with its default, ``(default: X)``, unless it is a flag, ``None``, or the
  help already says it; a description or ``epilog`` (the examples) of several lines is printed as
  written, one of one paragraph wrapped; a usage
  error is two lines on stderr (the error, then ``run 'PROG --help' for usage``) and exit 2.
- :func:`add_namespaces`: ``-n/--namespace`` (default: the kubeconfig context's namespace, see
  :func:`vbridge.commands.connecting.namespace`) and ``-A/--all-namespaces``.
  :func:`add_listing`: ``-o/--output wide|name|yaml|json``, ``--no-headers``, ``-l/--selector``
  (a label selector, sent to the apiserver) and ``-w/--watch``.
- :func:`render` prints :class:`Table` s as ``kubectl get`` does: columns three spaces apart,
  ``NAMESPACE`` first with ``-A``, the ``wide`` columns only with ``-o wide``, one table per kind
  with a blank line between; ``-o name`` prints ``KIND.GROUP/NAME``; ``-o json|yaml`` a ``List``.
  When nothing is found the table and name forms print nothing on stdout and kubectl's
  "No resources found in NS namespace." on stderr (exit 0).
- :func:`watch` is ``-w``: the tables once, then one row for each change, until interrupted.
- :func:`describe` turns an apiserver answer or a dropped connection into one line that says what
  to do; :func:`guarded` raises it as a :class:`bridge.errors.BridgeError` (exit 1).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import yaml

from bridge import errors
from bridge.k8s import paths

if TYPE_CHECKING:  # asyncio and the client (aiohttp) are imported by the commands that need them, not by every one
    import asyncio

    from bridge.k8s import client

__all__ = [
    "FORMATS",
    "GAP",
    "Column",
    "Formatter",
    "Kind",
    "Parser",
    "Table",
    "add_listing",
    "add_namespaces",
    "describe",
    "empty",
    "guarded",
    "name_of",
    "render",
    "row",
    "single",
    "stamped",
    "table",
    "watch",
    "write",
]

FORMATS = ("wide", "name", "yaml", "json")
GAP = "   "  # kubectl's column gap
T = TypeVar("T")


class Formatter(argparse.HelpFormatter):
    """Help that shows each option's default, wraps a one-paragraph description, and keeps text of
    several lines (the examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text.strip("\n"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        shown = (
            text
            and "default" not in text
            and action.option_strings
            and not isinstance(default, bool)
            and default not in (None, argparse.SUPPRESS, [], "")
        )
        return f"{text} (default: %(default)s)" if shown else text


class Parser(argparse.ArgumentParser):
    """The ``vbridge`` parser: :class:`Formatter` unless told otherwise (subparsers inherit the class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """A usage error as kubectl prints one: the error, then where the usage is; exit 2."""
        self.exit(2, f"{self.prog}: error: {message}\nrun '{self.prog} --help' for usage\n")


def add_namespaces(p: argparse.ArgumentParser, *, every: bool = True) -> None:
    p.add_argument(
        "-n", "--namespace", default=None, help="namespace (default: the kubeconfig context's namespace, else default)"
    )
    if every:
        p.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")


def add_listing(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", choices=FORMATS, default=None, help="wide, name, yaml or json (default: a table)")
    p.add_argument("--no-headers", action="store_true", help="no header line in the table forms")
    p.add_argument("-l", "--selector", default=None, help="label selector, e.g. -l team=ml,tier!=dev")
    p.add_argument("-w", "--watch", action="store_true", help="after the list, print a row for every change")


@dataclasses.dataclass(frozen=True)
class Column:
    header: str
    value: Callable[[dict[str, Any]], object]
    wide: bool = False  # only with -o wide


@dataclasses.dataclass(frozen=True)
class Kind:
    """A kind the listing commands read: where it is served, and its columns after NAME."""

    kind: str  # "Job"
    api_version: str  # "batch.volcano.sh/v1alpha1"
    plural: str  # "jobs"
    columns: tuple[Column, ...]
    namespaced: bool = True

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        where = namespace if self.namespaced else None
        return paths.resource(self.api_version, self.plural, namespace=where, name=name)


@dataclasses.dataclass(frozen=True)
class Table:
    """Objects printed with one set of columns (after NAMESPACE and NAME)."""

    columns: tuple[Column, ...]
    items: Sequence[dict[str, Any]]
    namespaced: bool = True


def name_of(obj: dict[str, Any]) -> str:
    """``kind.group/name``, as ``kubectl get -o name`` prints it (``pod/name`` for the core group)."""
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    kind = str(obj.get("kind") or "").lower()
    return f"{kind}.{group}/{obj['metadata']['name']}" if group else f"{kind}/{obj['metadata']['name']}"


def _header(t: Table, args: argparse.Namespace) -> list[str]:
    wide = args.output == "wide"
    lead = ["NAMESPACE"] if t.namespaced and args.all_namespaces else []
    return [*lead, "NAME", *(c.header for c in t.columns if wide or not c.wide)]


def row(t: Table, obj: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """The cells of one object, as :func:`render` prints them."""
    wide = args.output == "wide"
    meta = obj.get("metadata") or {}
    lead = [str(meta.get("namespace") or "")] if t.namespaced and args.all_namespaces else []
    cells = [str(c.value(obj)) for c in t.columns if wide or not c.wide]
    return [*lead, str(meta.get("name") or ""), *(cell if cell != "" else "<none>" for cell in cells)]


def table(header: Sequence[str], rows: Sequence[Sequence[object]], *, headers: bool = True) -> str:
    """Columns as kubectl aligns them: left-aligned, three spaces apart, no trailing blanks."""
    cells = [[str(c) for c in r] for r in ([header] if headers else []) + list(rows)]
    if not cells:
        return ""
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join(GAP.join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells)


def empty(args: argparse.Namespace, namespace: str | None) -> str:
    """kubectl's line for an empty list (on stderr)."""
    if getattr(args, "all_namespaces", False) or namespace is None:
        return "No resources found"
    return f"No resources found in {namespace} namespace."


def _as_list(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": list(items), "metadata": {"resourceVersion": ""}}


def single(obj: dict[str, Any], fmt: str) -> str:
    """One object as ``-o json`` or ``-o yaml`` prints it."""
    return json.dumps(obj, indent=4) if fmt == "json" else yaml.safe_dump(obj, sort_keys=False).rstrip("\n")


def render(tables: Sequence[Table], args: argparse.Namespace, namespace: str | None) -> tuple[str, str]:
    """(stdout, stderr) for ``tables`` in the form ``args.output`` asks for; ``namespace`` is the one
    listed (``None``: cluster-scoped or every namespace), for the empty-list line."""
    items = [obj for t in tables for obj in t.items]
    if args.output == "json":
        return json.dumps(_as_list(items), indent=4), ""
    if args.output == "yaml":
        return yaml.safe_dump(_as_list(items), sort_keys=False).rstrip("\n"), ""
    if not items:
        return "", empty(args, namespace)
    if args.output == "name":
        return "\n".join(name_of(obj) for obj in items), ""
    blocks = [
        table(_header(t, args), [row(t, obj, args) for obj in t.items], headers=not args.no_headers)
        for t in tables
        if t.items
    ]
    return "\n\n".join(blocks), ""


def stamped(kind: Kind, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items with their ``apiVersion`` and ``kind`` (a list answer may leave them out)."""
    return [{"apiVersion": kind.api_version, "kind": kind.kind, **obj} for obj in items]


async def watch(
    api: client.Client,
    tables: Sequence[Table],
    sources: Sequence[tuple[Kind, str, int]],
    args: argparse.Namespace,
    namespace: str | None,
    write: Callable[[str, bool], None],
    *,
    optional: bool = False,
) -> None:
    """``-w``: once every source has listed, print ``tables`` filled with what they listed, then a
    row (or a name, or an object) per change; ``write(text, to_stderr)``. Runs until cancelled.
    ``sources``: (kind, collection path, index of the table that prints it). With ``optional``, a
    kind the cluster does not serve (404) lists nothing; otherwise that is the error raised."""
    import asyncio

    from bridge.k8s import watching

    params = {"labelSelector": args.selector} if args.selector else None
    events: asyncio.Queue[tuple[int, str, dict[str, Any]]] = asyncio.Queue()

    async def pump(index: int, kind: Kind, path: str) -> None:
        listed = False
        try:
            async for change, obj in watching.watch(api, path, params=params):
                listed = listed or change == "SYNCED"
                await events.put((index, change, obj if change == "SYNCED" else stamped(kind, [obj])[0]))
        except errors.ApiError as exc:
            if exc.status != 404 or listed or not optional:
                raise
            await events.put((index, "SYNCED", {}))

    pumps = [asyncio.create_task(pump(t, kind, path)) for kind, path, t in sources]
    try:
        first: list[list[dict[str, Any]]] = [[] for _ in tables]
        synced = 0
        while synced < len(sources):
            index, change, obj = await _next(events, pumps)
            if change == "SYNCED":
                synced += 1
            elif change != "DELETED":
                first[index].append(obj)
        filled = [dataclasses.replace(t, items=items) for t, items in zip(tables, first, strict=True)]
        out, err = render(filled, args, namespace)
        if out or err:
            write(out or err, not out)
        widths = [_widths(t, args) for t in filled]
        while True:
            index, change, obj = await _next(events, pumps)
            if change != "SYNCED":
                write(_change(filled[index], obj, args, widths[index]), False)
    finally:
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)


async def _next(
    events: asyncio.Queue[tuple[int, str, dict[str, Any]]], pumps: list[asyncio.Task[None]]
) -> tuple[int, str, dict[str, Any]]:
    """The next event; a watch that failed raises its error here."""
    import asyncio

    while True:
        for task in pumps:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        try:  # not asyncio.wait_for: on 3.11 it loses a cancel that comes as the get completes
            async with asyncio.timeout(1.0):
                return await events.get()
        except TimeoutError:
            continue


def _widths(t: Table, args: argparse.Namespace) -> list[int]:
    cells = [_header(t, args), *(row(t, obj, args) for obj in t.items)]
    return [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]


def _change(t: Table, obj: dict[str, Any], args: argparse.Namespace, widths: list[int]) -> str:
    if args.output in ("json", "yaml"):
        return ("---\n" if args.output == "yaml" else "") + single(obj, args.output)
    if args.output == "name":
        return name_of(obj)
    cells = row(t, obj, args)
    return GAP.join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()


def write(text: str, to_stderr: bool = False) -> None:
    """Print ``text`` (nothing when empty) on stdout or stderr, flushed: the ``write`` of :func:`watch`."""
    if text:
        print(text, file=sys.stderr if to_stderr else sys.stdout, flush=True)


def describe(exc: BaseException, what: str = "", *, hint: str = "") -> str:
    """One line for an apiserver error or a transport failure: what failed, and what to do."""
    subject = what or "the request"
    if isinstance(exc, errors.ApiError):
        message = exc.message.strip() or exc.reason
        if exc.status == 404:
            if "could not find the requested resource" in message:
                return (
                    f"{subject}: this cluster does not serve the API (are the CRDs installed? "
                    "`vbridge doctor` checks; the chart installs them)"
                )
            return f"{subject} not found" + (f"; {hint}" if hint else "")
        if exc.status == 401:
            return f"{subject}: the apiserver refused this kubeconfig's credentials; log in again or pick --context"
        if exc.status == 403:
            return f"{subject}: forbidden ({message}); ask for RBAC on it, or use another --context"
        if exc.status == 409:
            return f"{subject} already exists" + (f"; {hint}" if hint else "")
        if exc.status in (400, 422):
            return f"{subject}: the apiserver refused it: {message}"
        return f"{subject}: the apiserver answered {exc.status} {exc.reason}: {message}"
    reason = str(exc) or type(exc).__name__
    return f"{subject}: cannot reach the apiserver ({reason}); is the cluster up? check --kubeconfig and --context"


async def guarded(work: Awaitable[T], what: str, *, hint: str = "") -> T:
    """``await work``, with an apiserver error or a dropped connection raised as one clear BridgeError."""
    from bridge.k8s import client

    try:
        return await work
    except errors.ApiError as exc:
        raise errors.BridgeError(describe(exc, what, hint=hint)) from None
    except client.TRANSPORT_ERRORS as exc:
        raise errors.BridgeError(describe(exc, what)) from None
