"""AdmissionReview v1: parse a request, build a response. Pure.

For an adapter with a view (the pod adapters, the hot path), parsing first tries msgspec: one
pass over the envelope and the object through the view, so only the fields the adapter reads are
built.
Anything that does not fit goes to the careful path (orjson, the whole object), which names what
is wrong; both give the same ``Request`` for what both accept.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Generic, NamedTuple, TypeVar

import msgspec
import orjson

from bridge import errors

__all__ = ["MAX_BODY", "MAX_MESSAGE", "Request", "ReviewError", "allow", "deny", "parse"]

MAX_BODY = 3 * 1024 * 1024  # the apiserver's own request limit for objects is about this size


class ReviewError(errors.InvalidObjectError):
    """The body is not a usable AdmissionReview."""


class Request(NamedTuple):
    uid: str
    api_version: str  # of the AdmissionReview, echoed back
    operation: str
    namespace: str
    group: str
    version: str
    kind: str
    object: dict[str, Any]
    old_object: dict[str, Any] | None = None  # UPDATE: the object as it was (careful path only)
    user: dict[str, Any] | None = None  # userInfo: who asked (careful path only: pods need none)


def _field(body: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = body.get(key)
    if not isinstance(value, kind):
        raise ReviewError(f"{where}.{key} must be a {kind.__name__}, got {type(value).__name__}")
    return value


class _Kind(msgspec.Struct):
    group: str = ""
    version: str = ""
    kind: str = ""


_View = TypeVar("_View")


class _Request(msgspec.Struct, Generic[_View]):
    uid: str
    kind: _Kind
    operation: str = ""
    namespace: str = ""
    object: _View | None = None


class _Review(msgspec.Struct, Generic[_View]):
    kind: str
    request: _Request[_View]
    apiVersion: str = ""


_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def _through_view(raw: bytes, view: Any) -> Request | None:
    decoder = _DECODERS.get(view)
    if decoder is None:
        decoder = _DECODERS[view] = msgspec.json.Decoder(_Review[view])
    try:
        review = decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    req, obj = review.request, review.request.object
    if review.kind != "AdmissionReview" or type(obj) is not dict:
        return None
    return Request(
        uid=req.uid,
        api_version=review.apiVersion or "admission.k8s.io/v1",
        operation=req.operation,
        namespace=req.namespace,
        group=req.kind.group,
        version=req.kind.version,
        kind=req.kind.kind,
        object=obj,
    )


def parse(raw: bytes, view: Any = None) -> Request:
    """The request in ``raw``; its object through ``view`` (a TypedDict) when given and it fits."""
    if view is not None:
        fast = _through_view(raw, view)
        if fast is not None:
            return fast
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ReviewError(f"body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ReviewError("body must be a JSON object (an AdmissionReview)")
    if body.get("kind") != "AdmissionReview":
        raise ReviewError(f"kind must be AdmissionReview, got {body.get('kind')!r}")
    request = _field(body, "request", dict, "AdmissionReview")
    uid = _field(request, "uid", str, "request")
    kind = _field(request, "kind", dict, "request")
    obj = request.get("object")
    if obj is not None and not isinstance(obj, dict):
        raise ReviewError("request.object must be an object")
    old = request.get("oldObject")
    if old is not None and not isinstance(old, dict):
        raise ReviewError("request.oldObject must be an object")
    user = request.get("userInfo")
    if user is not None and not isinstance(user, dict):
        raise ReviewError("request.userInfo must be an object")
    return Request(
        uid=uid,
        api_version=str(body.get("apiVersion") or "admission.k8s.io/v1"),
        operation=str(request.get("operation", "")),
        namespace=str(request.get("namespace") or ""),
        group=str(kind.get("group", "")),
        version=str(kind.get("version", "")),
        kind=str(kind.get("kind", "")),
        object=obj or {},
        old_object=old,
        user=user,
    )


def _review(api_version: str, response: dict[str, Any]) -> bytes:
    return orjson.dumps({"apiVersion": api_version, "kind": "AdmissionReview", "response": response})


def allow(
    uid: str,
    *,
    patch: list[dict[str, Any]] | None = None,
    warnings: tuple[str, ...] = (),
    api_version: str = "admission.k8s.io/v1",
) -> bytes:
    response: dict[str, Any] = {"uid": uid, "allowed": True}
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
    if warnings:
        response["warnings"] = [w[:256] for w in warnings]
    return _review(api_version, response)


MAX_MESSAGE = 1024  # a denial never echoes unbounded input back


def deny(uid: str, *, code: int, message: str, api_version: str = "admission.k8s.io/v1") -> bytes:
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    return _review(
        api_version,
        {
            "uid": uid,
            "allowed": False,
            "status": {
                "code": code,
                "message": message,
                "reason": "Forbidden" if code == 403 else "Invalid" if code == 422 else "BadRequest",
            },
        },
    )
