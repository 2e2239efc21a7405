"""The fields of a Pod that the pod adapters read and write at admission, as a decoding view.

The webhook decodes a pod review's object with this view (msgspec skips every other field
without building it), so a 10 KiB pod becomes a small dict. The patch is the same as on the whole
pod: the adapters read and change only these fields, and the JSON Patch diff of two views names
the same paths and values. ``tests/webhooks/test_views.py`` holds the two paths equal; a field an
adapter starts to read must be added here.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["Container", "Metadata", "Pod", "Spec"]


class Metadata(TypedDict, total=False):
    name: str
    generateName: str
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]


class Container(TypedDict, total=False):
    name: str
    args: list[str]
    resources: dict[str, Any]  # read by bridge.validation.pod_spec, as are the quantities below


class Spec(TypedDict, total=False):
    schedulerName: str
    schedulingGates: list[dict[str, Any]]
    schedulingGroup: dict[str, Any]
    containers: list[Container]
    initContainers: list[Container]
    resources: dict[str, Any]
    overhead: dict[str, Any]
    volumes: list[dict[str, Any]]


class Pod(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: Metadata
    spec: Spec
