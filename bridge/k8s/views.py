"""Decode only what a consumer reads: lists and watch events of one kind through a shape.

A :class:`View` is built from a ``TypedDict`` (``total=False``, nested as deep as wanted; a
member typed ``Any`` is kept whole). Lists and watch events decoded through it are plain dicts
holding only the shape's members: everything else (``managedFields``, volumes, most of the
status) is skipped by the decoder without ever becoming a Python object, so a 140,000-pod list
costs a fraction of the time and memory of decoding it whole. :data:`WHOLE` is the same three
decoders for whole objects (orjson), so a watch reads every kind through one interface
(:class:`Codec`).

Contract: what a view decodes is what the apiserver serves for that kind, so its members must
be typed as loosely as the API's schema allows (when in doubt, ``Any``). A watch event's type is
read before its object: a ``BOOKMARK`` (an object of the kind holding only
``metadata.resourceVersion``, with ``spec.containers: null`` for a pod) and an ``ERROR`` (a
Status) are decoded whole, never through the shape. A body that does not fit the shape raises
``msgspec.ValidationError`` (a ``ValueError``), like any undecodable answer; one nested deeper
than the decoder's recursion limit raises ``RecursionError`` (msgspec) or ``ValueError``
(orjson, past 1,024 levels): :data:`UNDECODABLE`. ``bridge.k8s.salvage`` takes a list apart
when one of its objects is such.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

import msgspec
import orjson

__all__ = ["UNDECODABLE", "WHOLE", "Codec", "View"]

T = TypeVar("T")
# What decoding an object may raise: it does not fit the shape, is not JSON, or is too deep.
UNDECODABLE: tuple[type[Exception], ...] = (ValueError, RecursionError)
# Events whose object is not one of the kind: decoded whole, before any shape is applied.
_NOT_OF_THE_KIND = frozenset({"BOOKMARK", "ERROR"})


class Codec(Protocol):
    """How a watch decodes a list page, one of its items, and one watch event line."""

    def list(self, body: bytes) -> dict[str, Any]: ...

    def item(self, raw: bytes) -> dict[str, Any]: ...

    def event(self, line: bytes) -> dict[str, Any]: ...


class _ListMeta(msgspec.Struct, rename="camel"):
    resource_version: str = ""
    continue_: str | None = msgspec.field(default=None, name="continue")


class _List(msgspec.Struct, Generic[T]):
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)
    items: list[T] = msgspec.field(default_factory=list)


class _Event(msgspec.Struct):
    type: str = ""
    object: msgspec.Raw = msgspec.Raw(b"{}")


_events = msgspec.json.Decoder(_Event)


class View:
    """The decoders of one shape, for ``client.Client.request`` and watches (``decode=``)."""

    def __init__(self, shape: Any) -> None:
        self.shape = shape
        self._object = msgspec.json.Decoder(shape)
        self._list = msgspec.json.Decoder(_List[shape])

    def list(self, body: bytes) -> dict[str, Any]:
        """A list answer as ``{"metadata": {"resourceVersion", "continue"}, "items": [...]}``."""
        page = self._list.decode(body)
        meta: dict[str, Any] = {"resourceVersion": page.metadata.resource_version}
        if page.metadata.continue_:
            meta["continue"] = page.metadata.continue_
        return {"metadata": meta, "items": page.items}

    def item(self, raw: bytes) -> dict[str, Any]:
        """One object of the kind (an item of a list taken apart)."""
        out: dict[str, Any] = self._object.decode(raw)
        return out

    def event(self, line: bytes) -> dict[str, Any]:
        """One watch event as ``{"type", "object"}``; a ``BOOKMARK``'s or ``ERROR``'s object whole."""
        event = _events.decode(line)
        if event.type in _NOT_OF_THE_KIND:
            return {"type": event.type, "object": orjson.loads(memoryview(event.object))}
        return {"type": event.type, "object": self._object.decode(event.object)}


class _Whole:
    """Whole objects, with orjson (several times faster than the stdlib on lists and events; as
    the apiserver's own unstructured decoding, integers beyond 64 bits come back as floats)."""

    def list(self, body: bytes) -> dict[str, Any]:
        out: dict[str, Any] = orjson.loads(body)
        return out

    item = list  # one object, or one watch event: the same whole decode
    event = list


WHOLE: Codec = _Whole()
