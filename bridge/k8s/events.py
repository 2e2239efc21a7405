"""Kubernetes Events (core/v1) about the objects we act on."""

from __future__ import annotations

import datetime
import logging
import uuid
from typing import Any

from bridge import errors
from bridge.k8s import client, paths

__all__ = ["emit"]

log = logging.getLogger(__name__)
_NOT_RECORDED: tuple[type[BaseException], ...] = (errors.ApiError, *client.TRANSPORT_ERRORS)


async def emit(api: client.Client, obj: dict[str, Any], *, reason: str, message: str, warning: bool = False) -> None:
    """Record an Event on ``obj``; failures are logged, never raised (an Event is best effort)."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta.get('name', 'object')}.{uuid.uuid4().hex[:12]}", "namespace": namespace},
        "involvedObject": {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "name": meta.get("name"),
            "namespace": namespace,
            "uid": meta.get("uid"),
        },
        "reason": reason,
        "message": message[:1024],
        "type": "Warning" if warning else "Normal",
        "source": {"component": "volcano-bridge"},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "reportingComponent": "volcano-bridge",
        "reportingInstance": "volcano-bridge",
    }
    try:
        await api.request("POST", paths.resource("v1", "events", namespace=namespace), body=body)
    except _NOT_RECORDED as exc:  # a refusal or a dropped connection: an Event is best effort
        log.warning("could not record event %s on %s: %s", reason, meta.get("name"), exc or type(exc).__name__)
