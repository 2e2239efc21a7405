"""Decode only what a consumer reads: lists and watch events of one kind through a shape.

A :class:`View` is built from a ``TypedDict`` (``total=False``, nested as deep as wanted; a
member typed ``Any`` is kept whole). Lists and watch events decoded through it are plain dicts
holding only the shape's members: everything else (``managedFields``, volumes, most of the
status) is skipped by the decoder without ever becoming a Python object, so a 140,000-pod list
costs a fraction of the time and memory of decoding it whole.

Contract: what a view decodes is what the apiserver serves for that kind, so its members must
be typed as loosely as the API's schema allows (when in doubt, ``Any``). A watch's ``ERROR``
event is decoded whole (it carries a Status, not the kind). A body that does not fit the shape
raises ``msgspec.ValidationError`` (a ``ValueError``), like any undecodable answer.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec

__all__ = ["View"]

T = TypeVar("T")


class _ListMeta(msgspec.Struct, rename="camel"):
    resource_version: str = ""
    continue_: str | None = msgspec.field(default=None, name="continue")


class _List(msgspec.Struct, Generic[T]):
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)
    items: list[T] = msgspec.field(default_factory=list)


class _Event(msgspec.Struct):
    type: str = ""
    object: msgspec.Raw = msgspec.Raw(b"{}")


_whole = msgspec.json.Decoder()
_events = msgspec.json.Decoder(_Event)


class View:
    """The decoders of one shape, for ``client.Client.request`` and ``stream_lines`` (``decode=``)."""

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

    def event(self, line: bytes) -> dict[str, Any]:
        """One watch event as ``{"type", "object"}``; an ``ERROR``'s object decoded whole."""
        event = _events.decode(line)
        decoder = _whole if event.type == "ERROR" else self._object
        return {"type": event.type, "object": decoder.decode(event.object)}
