"""JSON Patches by diffing: build the desired body, never write patch operations by hand.

Adapters build the desired body copy-on-write (:func:`assoc`), so every part they did not touch
is the *same* object as in the original. :func:`diff` drops those shared parts from both sides
before handing them to ``jsonpatch.JsonPatch.from_diff``, which then compares only what may
have changed: on a 10 KiB pod that is the difference between ~0.5 ms and ~20 µs. The patch is
exactly what a full diff yields for dict members; lists are compared whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jsonpatch

__all__ = ["assoc", "diff", "get_in"]


def _prune(a: Any, b: Any) -> tuple[Any, Any]:
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return a, b
    left: dict[str, Any] = {}
    right: dict[str, Any] = {}
    for key in [*a, *(k for k in b if k not in a)]:  # keep member order: the patch order follows it
        if key in a and key in b:
            if a[key] is b[key]:
                continue
            left[key], right[key] = _prune(a[key], b[key])
        elif key in a:
            left[key] = a[key]
        else:
            right[key] = b[key]
    return left, right


def diff(original: dict[str, Any], desired: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON Patch (RFC 6902) that turns ``original`` into ``desired``; empty when equal."""
    left, right = _prune(original, desired)
    ops: list[dict[str, Any]] = jsonpatch.JsonPatch.from_diff(left, right).patch
    return ops


def get_in(obj: Mapping[str, Any], path: Sequence[str], default: Any = None) -> Any:
    node: Any = obj
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return node


def assoc(obj: Mapping[str, Any], path: Sequence[str], value: Any) -> dict[str, Any]:
    """A copy of ``obj`` with ``value`` at ``path``; only the dicts along the path are copied.

    Missing (or non-dict) intermediate members become new dicts. The original is never changed.
    """
    root = dict(obj)
    node = root
    for key in path[:-1]:
        child = node.get(key)
        node[key] = dict(child) if isinstance(child, Mapping) else {}
        node = node[key]
    node[path[-1]] = value
    return root
