"""One AdmissionReview in, one answer out. Errors map to answers here and nowhere else.

On UPDATE (the kinds registered for it) the new object is admitted as on CREATE, with the old
object's queue as ``Context.admitted_queue``: a queue changed by a field or an annotation is
checked, one left as it was is not. An object being deleted is allowed as it is.

Before its adapter sees it, the object is held to its kind's shape (``Registration.shape``,
``bridge.adapters.shapes``): a member of the wrong JSON type is denied, naming the member. An
old object that does not fit is not held against the new one: the UPDATE is judged as a CREATE.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import traceback
from collections.abc import Mapping

from bridge import defaults, errors, patching
from bridge import facts as cluster_facts
from bridge.adapters import base, shapes
from webhooks import reviews

__all__ = ["NestingError", "ShapeError", "answer_error", "handle"]

log = logging.getLogger(__name__)


class ShapeError(errors.InvalidObjectError):
    """A member of the object has the wrong JSON type for what its adapter reads."""


class NestingError(errors.InvalidObjectError):
    """The object is nested deeper than copying and diffing it can go."""


def answer_error(uid: str, exc: Exception, *, adapter: base.Adapter | None, api_version: str) -> bytes:
    """The single mapping from errors to admission answers.

    - bad objects and queue refusals: a denial carrying the error's message and code; an object
      nested past Python's recursion limit (copying or diffing it raised RecursionError) is one;
    - anything unexpected (a bug of ours): for kinds registered ``Ignore`` (pods) the object is
      allowed with a warning, so a bridge defect never blocks pod creation; for ``Fail`` kinds
      it is denied with the message, as the apiserver would if we were down.
    """
    if isinstance(exc, RecursionError):
        exc = NestingError("the object is nested too deeply to review (hundreds of levels)")
    if isinstance(exc, errors.InvalidObjectError):
        return reviews.deny(uid, code=exc.code, message=f"volcano-bridge: {exc}", api_version=api_version)
    # Where it failed, not what it said: an exception's text may quote the object under review.
    where = "".join(traceback.format_tb(exc.__traceback__)[-3:]).rstrip()
    log.error("admission failed unexpectedly: %s\n%s", type(exc).__name__, where)
    message = f"volcano-bridge internal error: {type(exc).__name__}: {exc}"
    if adapter is not None and adapter.registration.failure_policy == "Ignore":
        return reviews.allow(uid, warnings=(message + " (admitted without gang scheduling)",), api_version=api_version)
    return reviews.deny(uid, code=500, message=message, api_version=api_version)


_REQUEST_UID = re.compile(rb'"request"\s*:\s*\{\s*"uid"\s*:\s*"([A-Za-z0-9._:-]{1,128})"')


def _uid_of(raw: bytes) -> str:
    """Best effort: the request uid of a body that failed to parse, so the answer still matches.

    The stdlib parser is used first on purpose: it is laxer than orjson (NaN, Infinity). A body
    it cannot read (nested past its recursion limit, cut short) still starts as the apiserver
    writes it, ``{"kind":…,"request":{"uid":"…"``: the uid is read from there.
    """
    try:
        body = json.loads(raw)
        uid = body.get("request", {}).get("uid", "") if isinstance(body, dict) else ""
        return uid if isinstance(uid, str) else ""
    except (ValueError, AttributeError, RecursionError):
        match = _REQUEST_UID.search(raw[:4096])
        return match.group(1).decode() if match else ""


def handle(
    raw: bytes,
    adapter: base.Adapter | None,
    facts: cluster_facts.View,
    *,
    scheduler_name: str = defaults.SCHEDULER_NAME,
) -> bytes:
    try:
        request = reviews.parse(raw, adapter.registration.view if adapter is not None else None)
    except errors.InvalidObjectError as exc:
        return answer_error(_uid_of(raw), exc, adapter=adapter, api_version="admission.k8s.io/v1")
    try:
        return _handle(request, adapter, facts, scheduler_name)
    except Exception as exc:  # mapped to an answer: never a crash, never a 500
        return answer_error(request.uid, exc, adapter=adapter, api_version=request.api_version)


def _handle(
    request: reviews.Request, adapter: base.Adapter | None, facts: cluster_facts.View, scheduler_name: str
) -> bytes:
    if adapter is None:  # a mistyped URL must not turn a Fail webhook into "allow everything"
        raise errors.UnknownPathError("this server has no webhook at that path; check the webhook configuration")
    reg = adapter.registration
    if request.operation not in reg.operations:
        return reviews.allow(request.uid, api_version=request.api_version)
    if request.kind != reg.kind or request.group != reg.group or request.version not in reg.versions:
        warning = (
            f"volcano-bridge does not handle {request.group or 'core'}/{request.version} {request.kind}; "
            "admitted without gang scheduling"
        )
        return reviews.allow(request.uid, warnings=(warning,), api_version=request.api_version)
    obj = dict(request.object)
    if not isinstance(obj.get("metadata"), Mapping):
        raise errors.InvalidObjectError(f"{reg.kind} has no metadata")
    if request.operation == "UPDATE" and obj["metadata"].get("deletionTimestamp"):
        return reviews.allow(request.uid, api_version=request.api_version)  # finalizers must come off, fit or not
    misfit = shapes.misfit(obj, reg.shape)
    if misfit is not None:
        raise ShapeError(f"{reg.kind} {misfit}")
    if not obj["metadata"].get("namespace") and request.namespace:
        obj["metadata"] = {**obj["metadata"], "namespace": request.namespace}
    ctx = facts.context(request.namespace, scheduler_name=scheduler_name)
    old = request.old_object if request.operation == "UPDATE" else None
    if request.user is not None or isinstance(old, Mapping):
        ctx = dataclasses.replace(ctx, user=request.user, previous=old if isinstance(old, Mapping) else None)
    if isinstance(old, Mapping) and shapes.misfit(old, reg.shape) is None:  # a misfit: judged as a CREATE
        ctx = dataclasses.replace(ctx, admitted_queue=adapter.queue_of(dict(old), ctx))
    result = adapter.admit(obj, ctx)
    if result is None:
        return reviews.allow(request.uid, api_version=request.api_version)
    if request.namespace and not request.object.get("metadata", {}).get("namespace"):
        result.desired["metadata"].pop("namespace", None)  # do not add what the user left to the request
    patch = patching.diff(request.object, result.desired)
    return reviews.allow(request.uid, patch=patch, warnings=result.warnings, api_version=request.api_version)
