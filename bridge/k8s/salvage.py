"""What is left of a list or a watch event holding an object that cannot be decoded (pure).

The watch decodes a list page in one pass (``views``); when that pass fails, :func:`page` takes
the page apart and decodes its items one by one, so one object that does not fit the shape, or
is nested past a decoder's recursion limit (orjson stops at 1,024 levels, msgspec at Python's
recursion limit; the apiserver stores custom objects up to 10,000 deep), costs only itself.
Splitting is done by msgspec into raw items where it can, else by a scan over the strings and
brackets of the body (no recursion, linear in its size). :func:`skipped` names what is lost as
far as it can be named: its namespace, name and resourceVersion, read from the ``metadata``
member alone. Nothing here is on the common path: it runs only after a decode has failed.
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from typing import Any

import msgspec
import orjson

from bridge.k8s import views

__all__ = ["Skipped", "page", "skipped"]

_RAW = views.View(msgspec.Raw)
# A JSON string (escapes included) or a bracket; what lies between them cannot change the depth.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_TYPE = re.compile(rb'^\s*\{\s*"type"\s*:\s*"([A-Z]{1,16})"')
_QUOTE, _OPENERS = ord('"'), frozenset(b"[{")


@dataclasses.dataclass(frozen=True)
class Skipped:
    """An object that could not be decoded: ``key`` is ``namespace/name`` (``?<checksum>`` when
    not even its metadata can be read), ``kind`` the watch event's type when it came in one."""

    key: str
    rv: str
    why: str
    kind: str = ""

    @property
    def name(self) -> str:
        return self.key.lstrip("/")

    def stub(self) -> dict[str, Any]:
        """What a relist reports for a deleted object: its namespace and name."""
        namespace, _, name = self.key.partition("/")
        return {"metadata": {"namespace": namespace or None, "name": name}}


def _outline(body: bytes) -> tuple[dict[bytes, tuple[int, int]], list[tuple[int, int]]]:
    """The spans of the root object's bracketed members (by quoted name) and of the bracketed
    values directly inside its ``items`` array, in one pass over strings and brackets.

    A bracket opening a member of the root follows that member's name directly (a string value
    is always followed by ``,`` and a name, or by the closing brace)."""
    members: dict[bytes, tuple[int, int]] = {}
    elements: list[tuple[int, int]] = []
    depth, name, member, opened, element = 0, b"", b"", 0, 0
    for match in _TOKEN.finditer(body):
        at = match.start()
        first = body[at]
        if first == _QUOTE:
            if depth == 1:
                name = match.group()
            continue
        if first in _OPENERS:
            depth += 1
            if depth == 2:
                member, opened = name, at
            elif depth == 3 and member == b'"items"':
                element = at
        else:
            depth -= 1
            if depth == 1:
                members[member] = (opened, at + 1)
            elif depth == 2 and member == b'"items"':
                elements.append((element, at + 1))
            elif depth <= 0:
                break
        name = b""
    return members, elements


def _member(body: bytes, name: bytes) -> bytes | None:
    span = _outline(body)[0].get(b'"' + name + b'"')
    return body[span[0] : span[1]] if span else None


def skipped(raw: bytes, exc: BaseException, *, event: bool = False) -> Skipped:
    """Name an object (or, with ``event``, a watch event line) that failed to decode with ``exc``."""
    why = f"{type(exc).__name__}: {str(exc)[:200]}"
    kind, whole = "", raw
    if event:
        typed = _TYPE.match(raw)
        kind = typed.group(1).decode() if typed else ""
        raw = _member(raw, b"object") or b""
    meta: Any = None
    text = _member(raw, b"metadata")
    if text is not None:
        try:
            meta = orjson.loads(text)
        except ValueError:
            meta = None
    if not isinstance(meta, dict) or not meta.get("name"):
        return Skipped(f"?{zlib.crc32(whole):08x}", "", why, kind)
    key = f"{meta.get('namespace') or ''}/{meta['name']}"
    return Skipped(key, str(meta.get("resourceVersion") or ""), why, kind)


def _split(body: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """A list page's metadata and its items, raw."""
    try:
        whole = _RAW.list(body)
        return whole["metadata"], [bytes(item) for item in whole["items"]]
    except RecursionError:
        pass  # an item too deep for msgspec even to skip: scan
    members, elements = _outline(body)
    if b'"items"' not in members:
        raise ValueError("not a list: no items")
    span = members.get(b'"metadata"')
    meta = orjson.loads(body[span[0] : span[1]]) if span else {}
    meta = meta if isinstance(meta, dict) else {}
    kept = {"resourceVersion": str(meta.get("resourceVersion") or "")}
    if meta.get("continue"):
        kept["continue"] = str(meta["continue"])
    return kept, [body[a:b] for a, b in elements]


def page(codec: views.Codec, body: bytes) -> tuple[dict[str, Any], list[Skipped]]:
    """A list page that ``codec.list`` could not decode, item by item: the page (as
    ``codec.list`` returns it) with the items that decode, and what was skipped. Raises
    ``ValueError`` when the body is not a list at all."""
    meta, raws = _split(body)
    items: list[dict[str, Any]] = []
    lost: list[Skipped] = []
    for raw in raws:
        try:
            obj = codec.item(raw)
            if not isinstance(obj, dict):
                raise ValueError(f"not an object: {raw[:40]!r}")
            items.append(obj)
        except views.UNDECODABLE as exc:
            lost.append(skipped(raw, exc))
    return {"metadata": meta, "items": items}, lost
