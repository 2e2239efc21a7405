"""A namespace user against our scheduling gates (``bridge.gates``), and our webhook taken down.

``refusal(as_user, ns, name, ops)``: the user's JSON Patch of a pod, and the apiserver's answer:
``None`` when it was applied, else ``(status, message)``; ``refused`` asserts a 403 or 422 whose
message says ``expect`` (or one of them) and returns the message. ``GROUP_FIXED``: what the
apiserver's own validation says of a changed ``spec.schedulingGroup`` (immutable in 1.37, so it
answers before the policy, which stands behind it), or the policy's words. ``lift(pod, gate)``, ``set_annotation``
and ``set_group`` are the patches an attacker sends. ``webhook_down(api, ns)`` points every webhook
of our MutatingWebhookConfiguration at a closed loopback port for the block (the apiserver
still calls it, and fails: pods are admitted unchanged under their Ignore policy), then restores
it; ``each_mode(api, ns, check)`` runs ``check("webhook up")``, then ``check("webhook down")`` inside
it. ``gates_of`` reads a pod's gate names. ``driver(as_user, ns, name)`` creates a spark-submit
driver as the user, one whose group (``OTHERS_GROUP``, "made by an operator") never comes, so it
stays behind ``keys.SPARK_GATE``.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

from kubernetes import client as k8s

from bridge import keys
from tests.builders import spark
from tests.support import apiserver
from vbridge.localcluster import cluster
from webhooks import configuration

__all__ = [
    "GROUP_FIXED",
    "OTHERS_GROUP",
    "driver",
    "each_mode",
    "gates_of",
    "lift",
    "refusal",
    "refused",
    "set_annotation",
    "set_group",
    "webhook_down",
]

OTHERS_GROUP = "made-by-an-operator"
GROUP_FIXED = ("pod updates may not change fields", "spec.schedulingGroup (the native PodGroup")
_MWC = ("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations")


def gates_of(api: k8s.ApiClient, ns: str, name: str) -> list[str]:
    pod = k8s.CoreV1Api(api).read_namespaced_pod(name, ns)
    return [g.name for g in pod.spec.scheduling_gates or []]


def refusal(as_user: k8s.ApiClient, ns: str, name: str, ops: list[dict[str, Any]]) -> tuple[int, str] | None:
    try:
        k8s.CoreV1Api(as_user).patch_namespaced_pod(name, ns, ops)
    except k8s.ApiException as exc:
        return int(exc.status), str(json.loads(exc.body).get("message", exc.body))
    return None


def refused(
    as_user: k8s.ApiClient, ns: str, name: str, ops: list[dict[str, Any]], expect: str | tuple[str, ...], mode: str
) -> str:
    answer = refusal(as_user, ns, name, ops)
    assert answer is not None, f"{mode}: {ops} applied to {name}"
    status, message = answer
    said = (expect,) if isinstance(expect, str) else expect
    assert status in (403, 422) and any(s in message for s in said), (mode, answer)
    return message


def lift(api: k8s.ApiClient, ns: str, name: str, gate: str) -> list[dict[str, Any]]:
    """The JSON Patch that removes ``gate`` from the pod as it is now."""
    index = gates_of(api, ns, name).index(gate)
    path = f"/spec/schedulingGates/{index}"
    return [{"op": "test", "path": f"{path}/name", "value": gate}, {"op": "remove", "path": path}]


def set_annotation(key: str, value: str) -> list[dict[str, Any]]:
    return [{"op": "add", "path": "/metadata/annotations/" + key.replace("/", "~1"), "value": value}]


def set_group(name: str | None) -> list[dict[str, Any]]:
    """Join native PodGroup ``name`` (``None``: leave any)."""
    if name is None:
        return [{"op": "remove", "path": "/spec/schedulingGroup"}]
    return [{"op": "add", "path": "/spec/schedulingGroup", "value": {"podGroupName": name}}]


def driver(as_user: k8s.ApiClient, ns: str, name: str) -> dict[str, Any]:
    """A spark-submit driver made by the user; returns the pod as admitted."""
    body = spark.submit_pod("driver", annotations={keys.GROUP_NAME: OTHERS_GROUP})
    body["metadata"].update(name=name, namespace=ns)
    created = k8s.CoreV1Api(as_user).create_namespaced_pod(ns, body)
    k8s.CoreV1Api(as_user).create_namespaced_config_map(ns, spark.conf_map())  # as spark-submit does next
    out: dict[str, Any] = k8s.ApiClient().sanitize_for_serialization(created)
    return out


def _stamped(api: k8s.ApiClient, ns: str) -> bool:
    """Whether our pod webhook answers now: a dry-run spark-submit driver comes back gated."""
    body = spark.submit_pod("driver")
    body["metadata"].update(name="webhook-probe", namespace=ns)
    made = k8s.CoreV1Api(api).create_namespaced_pod(ns, body, dry_run="All")
    return keys.SPARK_GATE in [g.name for g in made.spec.scheduling_gates or []]


@contextlib.contextmanager
def webhook_down(api: k8s.ApiClient, ns: str) -> Iterator[None]:
    """Returns once the apiserver no longer reaches our webhook (pods are admitted unstamped), and
    after the block once it does again."""
    custom = k8s.CustomObjectsApi(api)
    original = custom.get_cluster_custom_object(*_MWC, configuration.NAME)
    dead = f"https://127.0.0.1:{cluster.free_port()}"  # nothing listens there
    broken = copy.deepcopy(original)
    for hook in broken["webhooks"]:
        path = hook["clientConfig"]["url"].split("/", 3)[3]
        hook["clientConfig"]["url"] = f"{dead}/{path}"
    assert _stamped(api, ns), "the webhook was not up to begin with"
    custom.replace_cluster_custom_object(*_MWC, configuration.NAME, broken)
    try:
        apiserver.eventually(lambda: not _stamped(api, ns), timeout=30, what="pods admitted without our webhook")
        yield
    finally:
        current = custom.get_cluster_custom_object(*_MWC, configuration.NAME)
        restored = {**original, "metadata": {**original["metadata"], **current["metadata"]}}
        custom.replace_cluster_custom_object(*_MWC, configuration.NAME, restored)
        apiserver.eventually(lambda: _stamped(api, ns), timeout=30, what="our webhook answering again")


def each_mode(api: k8s.ApiClient, ns: str, check: Callable[[str], None]) -> None:
    check("webhook up")
    with webhook_down(api, ns):
        check("webhook down")
