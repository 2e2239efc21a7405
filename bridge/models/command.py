"""Command ``bus.volcano.sh/v1alpha1``: schema-compatible with Volcano's CRD.

A one-shot request to a controller: ``action`` (``AbortJob``, ``ResumeJob``, ``OpenQueue``,
``CloseQueue``, ...) on ``target``, an ownerReference to the Job or Queue (vcctl also makes it
the Command's owner, so the Command goes when its target does). No spec and no status: the
fields sit beside ``metadata``, as in Volcano.
"""

from __future__ import annotations

import pydantic

from bridge import defaults
from bridge.models import base as model_base

__all__ = ["CRD", "Command", "Target"]


class Target(model_base.K8sModel):
    """The object the command is for: an ownerReference."""

    model_config = pydantic.ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class Command(model_base.K8sModel):
    action: str | None = None
    target: Target | None = None
    reason: str | None = None
    message: str | None = None


_GROUP, _VERSION = defaults.BUS_API.split("/")
CRD = model_base.CrdInfo(
    group=_GROUP,
    version=_VERSION,
    kind="Command",
    plural="commands",
    singular="command",
    short_names=(),
    namespaced=True,
    status_subresource=False,
    columns=(),
    root_model=Command,
)
