"""JSON Patches by diffing: build the desired body, never write patch operations by hand."""

from __future__ import annotations

from typing import Any

import jsonpatch

__all__ = ["diff"]


def diff(original: dict[str, Any], desired: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON Patch (RFC 6902) that turns ``original`` into ``desired``; empty when equal."""
    ops: list[dict[str, Any]] = jsonpatch.JsonPatch.from_diff(original, desired).patch
    return ops
