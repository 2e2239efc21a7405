"""Batch users for the integration tests: a user with only the built-in ``edit`` ClusterRole in a
namespace, reached through impersonation (the admin kubeconfig may impersonate, as kubectl
``--as`` does), never as cluster admin.

``edit`` covers the job kinds through aggregation: the chart's user roles (rendered from the
chart itself) for PodGroups and Volcano Jobs, and the rules the operators' own charts aggregate
for their kinds (written here, since only their CRDs are installed on the test bed). The
kube-controller-manager's aggregation controller folds them in; ``aggregate_edit`` waits for it.
"""

from __future__ import annotations

import pathlib
import uuid
from typing import Any

import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bridge.adapters import registry
from tests.support import apiserver, helmchart
from vbridge.localcluster import cluster

# What the training- and spark-operator charts add to ``edit`` for their kinds.
OPERATOR_KINDS = [
    {"apiGroups": [k.group], "resources": [k.plural]} for k in registry.kinds() if k.workload.operator_table
]
WRITE = ["get", "list", "watch", "create", "update", "patch", "delete"]


def _apply_cluster_role(api: k8s.ApiClient, body: dict[str, Any]) -> None:
    rbac = k8s.RbacAuthorizationV1Api(api)
    try:
        rbac.create_cluster_role(body)
    except k8s.ApiException as exc:
        if exc.status != 409:
            raise
        rbac.replace_cluster_role(body["metadata"]["name"], body)


def aggregate_edit(api: k8s.ApiClient, helm: pathlib.Path) -> None:
    """The chart's and the operators' user rules aggregated into ``edit``; returns once they are in it."""
    proc = helmchart.run_template(helm, ["--show-only", "templates/rbac-users.yaml"])
    assert proc.returncode == 0, proc.stderr
    roles = [d for d in yaml.safe_load_all(proc.stdout) if d and d["kind"] == "ClusterRole"]
    roles.append(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "name": "test-operators-edit",
                "labels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"},
            },
            "rules": [{**rule, "verbs": WRITE} for rule in OPERATOR_KINDS],
        }
    )
    for role in roles:
        _apply_cluster_role(api, role)

    def folded() -> bool:
        edit = k8s.RbacAuthorizationV1Api(api).read_cluster_role("edit")
        granted = {(g, r) for rule in edit.rules or [] for g in rule.api_groups or [] for r in rule.resources or []}
        return {("scheduling.volcano.sh", "podgroups"), ("kubeflow.org", "tfjobs")} <= granted

    apiserver.eventually(folded, timeout=60, what="the aggregation controller to fold the user roles into edit")


def editor(api: k8s.ApiClient, lc: cluster.LocalCluster, namespace: str) -> tuple[str, k8s.ApiClient]:
    """A fresh user bound to ``edit`` in ``namespace`` only, and a client acting as that user."""
    user = "batch-user-" + uuid.uuid4().hex[:6]
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": f"{user}-edit", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    k8s.RbacAuthorizationV1Api(api).create_namespaced_role_binding(namespace, binding)
    return user, impersonating(lc, user)


def impersonating(lc: cluster.LocalCluster, user: str) -> k8s.ApiClient:
    """A client acting as ``user`` (a ServiceAccount as ``system:serviceaccount:<ns>:<name>``)."""
    as_user = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
    as_user.set_default_header("Impersonate-User", user)
    return as_user


def can(as_user: k8s.ApiClient, verb: str, group: str, resource: str, namespace: str) -> bool:
    """What the apiserver says the user may do (a SelfSubjectAccessReview, made as the user)."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": verb, "group": group, "resource": resource, "namespace": namespace}},
    }
    out = k8s.AuthorizationV1Api(as_user).create_self_subject_access_review(review)
    return bool(out.status.allowed)
