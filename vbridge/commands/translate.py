"""``vbridge translate -f FILE|DIR|-``: offline, what the bridge would do to manifests and scripts.

Inputs: files, directories (their ``*.yaml``, ``*.yml``, ``*.json`` and ``*.sh``, sorted, not
recursive) and ``-`` (stdin); YAML streams of many documents, JSON, ``kind: List``. A shell
script (``.sh``, a ``#!`` line, or a ``spark-submit`` line in a file that is neither YAML nor
JSON by name) is read for its spark-submit command lines (``bridge.adapters.spark.submit``).
The translation itself is :mod:`bridge.translating`.

Output (``-o yaml``, the default): each object as admitted, with its notes and patch as
comments, then a second section with the PodGroups the bridge creates (owned by those objects:
not for ``kubectl apply``). ``--converted-only``: only what a user applies, every object in
today's API and otherwise unchanged, so ``vbridge translate -f old/ --converted-only | kubectl
apply -f -`` leaves no ownerless PodGroup behind. ``-o json``: the same as JSON (a ``List`` for
``--converted-only``). Objects nothing gang-schedules are left out silently, or with
``--explain-skipped`` get one comment line saying why.

Errors: each is one line on stderr, ``FILE:LINE[:COLUMN]: error: …`` (YAML and JSON syntax, a
document that is no object, a denial, a script line that cannot be read), and the exit code is 1;
the others are still translated. Inputs are read by :mod:`bridge.inputs`, within its bounds: at
most ``defaults.MAX_INPUT_BYTES`` (3 MiB) each, regular files only (stdin only as ``-``), YAML
aliases within kubectl's expansion bound; past one, that input is one line of error. A malformed
flag is a usage error (exit 2), as with kubectl.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import re
import sys
from typing import Any

import yaml

from bridge import defaults, errors, inputs, translating

__all__ = ["SUFFIXES", "add_parser", "main"]

SUFFIXES = (".yaml", ".yml", ".json", ".sh")
_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_SPARK_SUBMIT_LINE = re.compile(r"^\s*[^#\s]*spark-submit(\s|$)", re.MULTILINE)
_PODGROUPS_HEADER = (
    "# === what the bridge creates: the PodGroups of the objects above, owned by them; do not apply these"
    " (--converted-only prints only what to apply)"
)


def _label(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE (e.g. vbridge.io/gang-scheduling=enabled), got {item!r}")
    return key, value


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``translate`` on ``parser.add_subparsers()``'s result."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "translate",
        help="print, offline, what the bridge would do to manifests and spark-submit scripts",
        description="Offline: each object as admitted and the PodGroup the bridge creates for it. "
        "Exit 0, or 1 when an input cannot be read or would be denied.",
        epilog="examples:\n"
        "  vbridge translate -f examples/tfjob-v1alpha1.yaml                 # as admitted, and its PodGroup\n"
        "  vbridge translate -f old/ --converted-only | kubectl apply -f -   # migrate a folder\n"
        "  vbridge translate -f submit.sh --explain-skipped                  # a spark-submit script\n",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="the same as -f FILE")
    p.add_argument(
        "-f",
        "--filename",
        action="append",
        default=[],
        metavar="FILE|DIR|-",
        help="a manifest, a spark-submit script, a directory of them, or - for stdin (repeatable)",
    )
    p.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml", help="yaml or json")
    p.add_argument(
        "--converted-only",
        action="store_true",
        help="print only what to apply: each object in today's API, otherwise unchanged; no PodGroups",
    )
    p.add_argument(
        "--explain-skipped",
        action="store_true",
        help="one comment line for each object nothing gang-schedules, saying why",
    )
    p.add_argument(
        "--namespace-label",
        action="append",
        type=_label,
        default=[],
        metavar="KEY=VALUE",
        help="labels of the target namespace (e.g. vbridge.io/gang-scheduling=enabled)",
    )
    p.add_argument("--scheduler-name", default=defaults.SCHEDULER_NAME, help="the schedulerName the bridge stamps")
    p.set_defaults(func=main)
    return p


@dataclasses.dataclass(frozen=True)
class _Result:
    where: str  # FILE:LINE (FILE:LINE:COLUMN for what could not be read)
    outcome: translating.Outcome
    unreadable: bool = False  # not an object at all: on stderr only


class _InputError(Exception):
    """An input that cannot be read, with where (``FILE:LINE:COLUMN``) and what."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where, self.message = where, message

    def result(self) -> _Result:
        return _Result(self.where, translating.Outcome("", None, None, None, [], (), error=self.message), True)


def main(args: argparse.Namespace) -> int:
    inputs = [*([args.file] if args.file else []), *args.filename]
    if not inputs:
        print("vbridge translate: error: no input: give -f FILE|DIR|- (or FILE)", file=sys.stderr)
        return 2
    labels = dict(args.namespace_label)
    results = [r for spec in inputs for name, data in _sources(spec) for r in _translated(name, data, labels, args)]
    for r in results:
        if r.outcome.error:
            what = f"{r.outcome.source}: " if r.outcome.source else ""
            print(f"{r.where}: error: {what}{r.outcome.error}", file=sys.stderr)
    try:
        text = _render([r for r in results if not r.unreadable], args)
    except RecursionError:
        print("vbridge translate: error: an object is nested too deeply to print", file=sys.stderr)
        return 1
    if text:
        print(text, flush=True)
    return 1 if any(r.outcome.error for r in results) else 0


def _sources(spec: str) -> list[tuple[str, bytes | _InputError]]:
    """``(name, contents)`` of each input file, or the error reading it (``bridge.inputs``' bounds)."""
    if spec == inputs.STDIN:
        return [("<stdin>", _read(spec))]
    path = pathlib.Path(spec)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in SUFFIXES and p.is_file())
        if not files:
            return [(spec, _InputError(spec, f"no {', '.join(SUFFIXES)} files in this directory"))]
        return [(str(p), _read(str(p))) for p in files]
    return [(spec, _read(spec))]


def _read(spec: str) -> bytes | _InputError:
    try:
        return inputs.read(spec)
    except errors.InputError as exc:
        return _InputError(exc.where, exc.detail)


def _decoded(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise _InputError(f"{name}:{line}:{column}", f"not UTF-8 text ({exc.reason})") from None


def _is_script(name: str, text: str) -> bool:
    suffix = pathlib.PurePath(name).suffix.lower()
    if suffix == ".sh" or text.startswith("#!"):
        return True
    return suffix not in _MANIFEST_SUFFIXES and _SPARK_SUBMIT_LINE.search(text) is not None


def _translated(
    name: str, data: bytes | _InputError, labels: dict[str, str], args: argparse.Namespace
) -> list[_Result]:
    try:
        if isinstance(data, _InputError):
            raise data
        text = _decoded(name, data)
    except _InputError as exc:
        return [exc.result()]
    scheduler = args.scheduler_name
    if _is_script(name, text):
        outcomes = translating.translate_script(text, namespace_labels=labels, scheduler_name=scheduler)
        return [_Result(f"{name}:{o.line}" if o.line else name, o) for o in outcomes]
    out = []
    for document in _documents(name, text):
        if isinstance(document, _InputError):
            out.append(document.result())
            continue
        line, column, body = document
        for obj in _objects(name, line, column, body):
            if isinstance(obj, _InputError):
                out.append(obj.result())
                continue
            outcome = translating.translate(obj, namespace_labels=labels, scheduler_name=scheduler)
            out.append(_Result(f"{name}:{line}", outcome))
    return out


def _documents(name: str, text: str) -> list[tuple[int, int, Any] | _InputError]:
    """Each non-empty document with the line and column it starts at; an error ends the list."""
    if pathlib.PurePath(name).suffix.lower() == ".json":
        try:
            return [(1, 1, json.loads(text))]
        except json.JSONDecodeError as exc:
            return [_InputError(f"{name}:{exc.lineno}:{exc.colno}", exc.msg)]
        except RecursionError:
            return [_InputError(name, "nested too deeply to read")]
    if text.lstrip().startswith("{"):  # JSON by its look (stdin): tabs and all; else read as YAML
        try:
            return [(1, 1, json.loads(text))]
        except (json.JSONDecodeError, RecursionError):
            pass
    out: list[tuple[int, int, Any] | _InputError] = []
    try:
        out.extend(inputs.yaml_documents(name, text))
    except errors.InputError as exc:
        out.append(_InputError(exc.where, exc.detail))
    return out


_TYPES = {str: "text", list: "a list", int: "a number", float: "a number", bool: "true or false"}


def _objects(name: str, line: int, column: int, body: Any) -> list[dict[str, Any] | _InputError]:
    """The document's objects: itself, or the items of a ``kind: List``."""
    items: list[Any]
    if isinstance(body, dict) and body.get("kind") == "List" and isinstance(body.get("items"), list):
        items = body["items"]
    else:
        items = [body]
    out: list[dict[str, Any] | _InputError] = []
    for item in items:
        if isinstance(item, dict):
            out.append(item)
        else:
            what = _TYPES.get(type(item), f"a {type(item).__name__}")
            message = f"{what}, not a Kubernetes object (a mapping with apiVersion and kind)"
            out.append(_InputError(f"{name}:{line}:{column}", message))
    return out


def _render(results: list[_Result], args: argparse.Namespace) -> str:
    if args.converted_only:
        return _render_converted_json(results) if args.output == "json" else _render_converted(results, args)
    return _render_json(results, args) if args.output == "json" else _render_yaml(results, args)


def _dump(obj: Any) -> str:
    return str(yaml.safe_dump(obj, sort_keys=False)).rstrip()


def _comment(label: str, notes: tuple[str, ...]) -> list[str]:
    return [f"# {label}: {n}" for n in notes]


def _render_yaml(results: list[_Result], args: argparse.Namespace) -> str:
    out: list[str] = []
    groups: list[str] = []
    for r in results:
        o = r.outcome
        if o.skipped:
            if args.explain_skipped:
                out.append(f"# skipped: {r.where}: {o.source}: {o.skipped}")
            continue
        out.append(f"# --- {r.where}: {o.source}")
        out += _comment("note", o.notes)
        if o.error:
            out.append(f"# {'DENIED' if o.current is not None else 'ERROR'}: {o.error}")
            continue
        if o.desired is not None:
            out.append(f"# patch ({len(o.patch)} operations, against the object in today's API):")
            out += ["#   " + json.dumps(op) for op in o.patch]
            out += [_dump(o.desired), "---"]
        elif o.current is not None:
            out += [_dump(o.current), "---"]
        if o.podgroup is not None:
            groups += [f"# for {o.source} ({r.where})", _dump(o.podgroup), "---"]
    if groups:
        out += [_PODGROUPS_HEADER, *groups]
    return "\n".join(out)


def _render_converted(results: list[_Result], args: argparse.Namespace) -> str:
    out: list[str] = []
    for r in results:
        o = r.outcome
        if o.error:
            continue
        if o.current is None:
            if not o.skipped or args.explain_skipped:
                what = "a spark-submit command line: nothing to apply; submit it as it is"
                out.append(f"# {r.where}: {o.source}: {what}")
            continue
        if o.skipped and args.explain_skipped:
            out.append(f"# skipped: {r.where}: {o.source}: {o.skipped}")
        if o.converted is not None:
            out.append(f"# {r.where}: converted from {o.source}")
            out += _comment("note", o.notes)
        out += [_dump(o.current), "---"]
    return "\n".join(out)


def _plain(value: Any) -> Any:
    """JSON-friendly: mapping keys as strings (YAML allows numbers, dates, …)."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _json(value: Any) -> str:
    return json.dumps(_plain(value), indent=2, default=str)


def _render_json(results: list[_Result], args: argparse.Namespace) -> str:
    records = []
    for r in results:
        o = r.outcome
        if o.skipped and not args.explain_skipped:
            continue
        record: dict[str, Any] = {"input": r.where, "source": o.source, "notes": list(o.notes)}
        for key, value in (("error", o.error), ("skipped", o.skipped), ("converted", o.converted)):
            if value is not None:
                record[key] = value
        if o.desired is not None:
            record |= {"desired": o.desired, "patch": o.patch}
        elif o.current is not None and not o.skipped:
            record["object"] = o.current
        if o.podgroup is not None:
            record["podgroup"] = o.podgroup
        records.append(record)
    return _json(records)


def _render_converted_json(results: list[_Result]) -> str:
    items = [r.outcome.current for r in results if r.outcome.current is not None and not r.outcome.error]
    return _json({"apiVersion": "v1", "kind": "List", "items": items})
