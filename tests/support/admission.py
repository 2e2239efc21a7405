"""Helpers for admission tests: cluster facts as plain data, AdmissionReview bodies, answers."""

from __future__ import annotations

import json
from typing import Any

from bridge import queues
from bridge.adapters import base, registry
from webhooks import admission

TF = ("kubeflow.org", "v1", "TFJob")
TF_PATH = "/mutate/kubeflow-org-tfjob"
POD = ("", "v1", "Pod")


class Facts:
    """What ``bridge.facts.Facts`` answers, from queues given here (default: the ``default`` queue)."""

    synced = True

    def __init__(self, **queue_facts: queues.QueueFacts) -> None:
        self.queues = queue_facts or {"default": queues.QueueFacts()}

    def context(self, namespace: str, *, scheduler_name: str) -> base.Context:
        return base.Context(namespace=namespace, queues=self.queues, scheduler_name=scheduler_name)


def review(
    obj: Any,
    *,
    kind: tuple[str, str, str],
    namespace: str = "team-a",
    uid: str = "u-1",
    operation: str = "CREATE",
    old: Any = None,
    user: Any = None,
) -> bytes:
    """An AdmissionReview of ``obj``; ``old`` (an UPDATE's object as it was) is sent as oldObject,
    ``user`` as userInfo."""
    group, version, k = kind
    request = {
        "uid": uid,
        "kind": {"group": group, "version": version, "kind": k},
        "operation": operation,
        "namespace": namespace,
        "object": obj,
    }
    if old is not None:
        request["oldObject"] = old
    if user is not None:
        request["userInfo"] = user
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


def answer(raw: bytes, path: str, facts: Any = None) -> dict[str, Any]:
    """The ``response`` of the answer the adapter at ``path`` gives to ``raw``."""
    out: dict[str, Any] = json.loads(admission.handle(raw, registry.by_path(path), facts or Facts()))
    return dict(out["response"])
