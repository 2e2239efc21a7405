"""The MutatingWebhookConfiguration, generated from the adapter registry. Pure.

One webhook per adapter: its rules (operations and scope from the registration), failure
policy, the excluded namespaces (namespaced kinds), objectSelectors and matchConditions (mirror
pods, pods that need nothing, UPDATEs that change neither spec nor annotations).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from bridge import defaults, keys
from bridge.adapters import base, registry

__all__ = ["NAME", "NATIVE_POD_DONE", "TIMEOUT_SECONDS", "build", "webhook_name"]

NAME = "volcano-bridge"
TIMEOUT_SECONDS = defaults.WEBHOOK_TIMEOUT_SECONDS
_NOT_MIRROR = "!has(object.metadata.annotations) || !('kubernetes.io/config.mirror' in object.metadata.annotations)"
# UPDATE: only a change of the spec or the annotations (where queues are named) is sent; status
# writes (the scheduler writes a PodGroup's status on the object) and label edits are not.
_CHANGED = (
    "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec"
    " || has(object.metadata.annotations) != has(oldObject.metadata.annotations)"
    " || (has(object.metadata.annotations) && object.metadata.annotations != oldObject.metadata.annotations)"
)

# Native backend: a pod needs nothing from us once it joined a native group (set only by us).
NATIVE_POD_DONE = "has(object.spec.schedulingGroup)"


def webhook_name(reg: base.Registration) -> str:
    """A fully qualified webhook name, e.g. ``tfjob.kubeflow.org.vbridge.io``."""
    group, _, kind = reg.name.partition("/")
    return f"{kind}.{group}.vbridge.io"


def _client_config(
    reg: base.Registration, *, url: str | None, service: tuple[str, str, int] | None, ca_bundle: bytes
) -> dict[str, Any]:
    cfg: dict[str, Any] = {"caBundle": base64.b64encode(ca_bundle).decode()}
    if url:
        cfg["url"] = url.rstrip("/") + reg.path
    elif service:
        namespace, name, port = service
        cfg["service"] = {"namespace": namespace, "name": name, "port": port, "path": reg.path}
    else:
        raise ValueError("either url or service is required")
    return cfg


def build(
    *,
    ca_bundle: bytes,
    url: str | None = None,
    service: tuple[str, str, int] | None = None,
    exclude_namespaces: Sequence[str] = (defaults.SYSTEM_NAMESPACE,),
    adapters: Sequence[base.Adapter] | None = None,  # registry.ADAPTERS as it is when called
    name: str = NAME,
    scheduler_name: str = defaults.SCHEDULER_NAME,
    backend: str = "volcano",
) -> dict[str, Any]:
    """The MutatingWebhookConfiguration. ``backend`` "native": the pod webhooks skip only pods
    that joined a native group already (``spec.schedulingGroup``), and stamped templates carry no
    ``vbridge.io/grouped`` label, so every grouped pod is seen once for its native stamp."""
    webhooks = []
    for adapter in registry.ADAPTERS if adapters is None else adapters:
        reg = adapter.registration
        hook: dict[str, Any] = {
            "name": webhook_name(reg),
            "admissionReviewVersions": ["v1"],
            "clientConfig": _client_config(reg, url=url, service=service, ca_bundle=ca_bundle),
            "rules": [
                {
                    "apiGroups": [reg.group],
                    "apiVersions": list(reg.versions),
                    "operations": list(reg.operations),
                    "resources": [reg.plural],
                    "scope": reg.scope,
                }
            ],
            "failurePolicy": reg.failure_policy,
            "matchPolicy": "Equivalent",
            "sideEffects": "None",
            "timeoutSeconds": TIMEOUT_SECONDS,
            "reinvocationPolicy": "Never",
        }
        if reg.scope == "Namespaced":  # a cluster-scoped object is never skipped by namespace
            hook["namespaceSelector"] = {
                "matchExpressions": [
                    {
                        "key": "kubernetes.io/metadata.name",
                        "operator": "NotIn",
                        "values": sorted(set(exclude_namespaces)),
                    },
                ]
            }
        if reg.object_selector:
            hook["objectSelector"] = {
                "matchExpressions": [
                    *({"key": k, "operator": "Exists"} for k in reg.object_selector),
                    # made with its group already (a stamped template, a Spark driver we admitted)
                    {"key": keys.GROUPED_LABEL, "operator": "DoesNotExist"},
                ]
            }
        conditions = []
        if reg.kind == "Pod":
            conditions.append({"name": "not-a-mirror-pod", "expression": _NOT_MIRROR})
        if "UPDATE" in reg.operations:
            conditions.append({"name": "changed-on-update", "expression": _CHANGED})
        done_when = NATIVE_POD_DONE if backend == "native" and reg.kind == "Pod" else reg.done_when
        if done_when:
            done = done_when.replace("{scheduler}", scheduler_name)
            conditions.append({"name": "not-done-already", "expression": f"!({done})"})
        if conditions:
            hook["matchConditions"] = conditions
        webhooks.append(hook)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name, "labels": {keys.MANAGED_BY: "volcano-bridge"}},
        "webhooks": webhooks,
    }
