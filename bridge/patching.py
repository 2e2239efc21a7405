"""JSON Patches by diffing: build the desired body, never write patch operations by hand.

Adapters build the desired body copy-on-write (:func:`assoc`), so every part they did not touch
is the *same* object as in the original. :func:`diff` walks both bodies, skips the shared parts
by identity, and compares only what may have changed. Objects (dicts) are diffed member by
member here, in member order; two lists that differ are handed to
``jsonpatch.JsonPatch.from_diff``, whose list operations are kept as they are (prefixed with the
list's pointer). Scalars are compared as JSON compares them: ``1``, ``1.0`` and ``true`` differ.

On a 10 KiB pod this is the difference between ~0.5 ms (a full ``from_diff``) and a few µs; it
is the admission webhook's hottest path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jsonpatch
import orjson

__all__ = ["assoc", "diff", "merge_patch"]

_ABSENT: Any = object()


def _token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1") if ("~" in key or "/" in key) else key


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: Python's == says 0 == False == 0.0, JSON does not."""
    if a is b:
        return True
    if type(a) is not type(b) or a != b:
        return False
    if not isinstance(a, (list, dict)):
        return True
    try:  # containers equal by ==: compare their JSON, which tells 0, 0.0 and false apart
        return bool(orjson.dumps(a) == orjson.dumps(b))
    except TypeError:  # not serialisable by orjson (an integer beyond 64 bits): let jsonpatch decide
        return False


def _lists(path: str, a: list[Any], b: list[Any], ops: list[dict[str, Any]]) -> None:
    for op in jsonpatch.JsonPatch.from_diff(a, b).patch:
        op = {**op, "path": path + op["path"]}
        if "from" in op:
            op["from"] = path + op["from"]
        ops.append(op)


def _walk(path: str, a: dict[str, Any], b: dict[str, Any], ops: list[dict[str, Any]]) -> None:
    for key in a:
        if key not in b:
            ops.append({"op": "remove", "path": f"{path}/{_token(key)}"})
    for key, new in b.items():
        old = a.get(key, _ABSENT)
        if old is new:  # shared with the original: untouched
            continue
        if old is _ABSENT:
            ops.append({"op": "add", "path": f"{path}/{_token(key)}", "value": new})
        elif isinstance(old, dict) and isinstance(new, dict):
            _walk(f"{path}/{_token(key)}", old, new, ops)
        elif isinstance(old, list) and isinstance(new, list):
            if not _same(old, new):
                _lists(f"{path}/{_token(key)}", old, new, ops)
        elif not _same(old, new):
            ops.append({"op": "replace", "path": f"{path}/{_token(key)}", "value": new})


def diff(original: dict[str, Any], desired: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON Patch (RFC 6902) that turns ``original`` into ``desired``; empty when equal.

    Values in the patch are shared with ``desired``, not copied: serialise the patch (or copy it)
    before changing ``desired``.
    """
    ops: list[dict[str, Any]] = []
    _walk("", original, desired, ops)
    return ops


def assoc(obj: Mapping[str, Any], path: Sequence[str], value: Any) -> dict[str, Any]:
    """A copy of ``obj`` with ``value`` at ``path``; only the dicts along the path are copied.

    Missing (or non-dict) intermediate members become new dicts. The original is never changed.
    """
    root = dict(obj)
    node = root
    for key in path[:-1]:
        child = node.get(key)
        node[key] = dict(child) if type(child) is dict or isinstance(child, Mapping) else {}
        node = node[key]
    node[path[-1]] = value
    return root


def merge_patch(old: Any, new: Any) -> Any:
    """A JSON merge patch (RFC 7386) turning ``old`` into ``new``: keys ``new`` lacks are set to
    None (removed), so counts of a phase no pod is in any more do not linger."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    out = {k: merge_patch(old.get(k), v) for k, v in new.items()}
    out.update({k: None for k in old if k not in new})
    return out
