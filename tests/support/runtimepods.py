"""Bodies for tests of the node simulator's runtime: the `vbridge serve` pod, its RBAC, a webhook."""

from __future__ import annotations

from typing import Any

from kubernetes import client as k8s

from bridge.adapters import registry
from webhooks import configuration

IMAGE = "localhost/volcano-bridge:dev"
NODE = "sim-run-0"
SA = "vbridge"
RULES: list[dict[str, Any]] = [  # the chart's ClusterRole, as far as `vbridge serve` reads and writes
    {"apiGroups": [""], "resources": ["pods", "nodes", "namespaces", "configmaps"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["update", "patch", "delete"]},
    {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
    {"apiGroups": ["scheduling.volcano.sh"], "resources": ["podgroups", "queues", "queues/status"], "verbs": ["*"]},
    {
        "apiGroups": ["batch.volcano.sh"],
        "resources": ["jobs", "jobs/status"],
        "verbs": ["get", "list", "watch", "update", "patch"],
    },
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["get", "list", "watch"]},
    *(  # every job kind an operator runs (the registry's), as the chart's generic reconcilers read them
        {"apiGroups": [k.group], "resources": [k.plural], "verbs": ["get", "list", "watch"]}
        for k in registry.kinds()
        if k.workload.operator_table
    ),
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
    {"apiGroups": ["bus.volcano.sh"], "resources": ["commands"], "verbs": ["list", "watch", "delete"]},
]


def serve_pod(ns: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "webhook", "labels": {"app": "vb-webhook"}},
        "spec": {
            "nodeName": NODE,
            "serviceAccountName": SA,
            "terminationGracePeriodSeconds": 10,
            "containers": [
                {
                    "name": "webhook",
                    "image": IMAGE,
                    "args": [
                        "serve",
                        "--host=0.0.0.0",
                        "--port=9443",
                        "--tls-cert=/tls/tls.crt",
                        "--tls-key=/tls/tls.key",
                        "-v",
                    ],
                    "ports": [{"name": "https", "containerPort": 9443}],
                    "env": [
                        {"name": "MY_NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                        {"name": "MY_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                        {"name": "MY_SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
                        {"name": "GREETING", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "greeting"}}},
                        {"name": "SECRET_WORD", "valueFrom": {"secretKeyRef": {"name": "words", "key": "word"}}},
                        {"name": "SAID", "value": "$(GREETING) from $(MY_NS)"},
                    ],
                    "readinessProbe": {
                        "httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"},
                        "periodSeconds": 1,
                    },
                    "volumeMounts": [
                        {"name": "tls", "mountPath": "/tls", "readOnly": True},
                        {"name": "settings", "mountPath": "/etc/vbridge-sim/settings", "readOnly": True},
                        {"name": "scratch", "mountPath": "/scratch"},
                    ],
                }
            ],
            "volumes": [
                {"name": "tls", "secret": {"secretName": "webhook-tls", "defaultMode": 0o400}},
                {
                    "name": "settings",
                    "configMap": {"name": "settings", "items": [{"key": "greeting", "path": "g.txt"}]},
                },
                {"name": "scratch", "emptyDir": {}},
            ],
        },
    }


def register_webhook(api: k8s.ApiClient, ns: str, ca_bundle: bytes) -> None:
    vcjob = [a for a in registry.ADAPTERS if a.registration.name == "batch.volcano.sh/job"]
    body = configuration.build(
        ca_bundle=ca_bundle, service=(ns, "vb-webhook", 443), adapters=vcjob, name=f"vb-sim-{ns}"
    )
    for hook in body["webhooks"]:
        hook["failurePolicy"] = "Fail"
        hook["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": ns}}
    k8s.AdmissionregistrationV1Api(api).create_mutating_webhook_configuration(body)


def create_vcjob(api: k8s.ApiClient, ns: str) -> dict[str, Any] | None:
    body = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"generateName": "mutated-"},
        "spec": {
            "minAvailable": 1,
            "tasks": [
                {"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}
            ],
        },
    }
    job: dict[str, Any] = k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        "batch.volcano.sh", "v1alpha1", ns, "jobs", body
    )
    if "queue" not in job["spec"]:  # created before the webhook configuration took effect
        return None
    return job
