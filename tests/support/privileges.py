"""What a release grants each ServiceAccount, and which of it an audit log shows was used.

``grants(manifest)``: from a rendered release (``helm get manifest``), every (ServiceAccount,
apiGroup, resource, verb, resourceNames) a ClusterRole or Role bound to one of its accounts
allows, one entry per combination of a rule's groups, resources and verbs.
``uses(grant, events)``: how many audited requests of that account the grant allowed (a 403 is
not a use). A grant no request used is one the run does not show is needed: ``NOT_EXERCISED``
names, for the chart's standalone install, those a code path needs that the helm test's run
does not take. ``table`` counts the uses of every grant, keyed (component, group, resource,
verb).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import yaml

__all__ = ["NOT_EXERCISED", "Grant", "can_i", "grants", "table", "uses"]


# Granted, needed by a code path the helm test's run does not take (or not in every run).
NOT_EXERCISED = {
    ("scheduler", "", "pods", "get"): "binder.py: a pod read back after a failed bind",
    # Never a request: what the scheduling-gate policy (bridge/gates.py) asks the authorizer (kubectl
    # auth can-i cannot ask it: a resource the server does not serve loses its group there).
    ("controllers", "vbridge.io", "schedulinggates", "lift"): "spark.py: a driver's gate lifted (the gate policy)",
    ("scheduler", "vbridge.io", "schedulinggates", "lift"): "binder.py: the queue gate lifted (the gate policy)",
}


@dataclasses.dataclass(frozen=True)
class Grant:
    account: str  # the ServiceAccount's name
    group: str
    resource: str  # with its subresource: ``pods/binding``
    verb: str
    names: tuple[str, ...] = ()  # resourceNames; empty: any
    namespace: str | None = None  # a Role's namespace; None: cluster-wide

    def allows(self, event: dict[str, Any]) -> bool:
        ref = event.get("objectRef") or {}
        resource = "/".join(x for x in (ref.get("resource"), ref.get("subresource")) if x)
        return (
            event.get("verb") == self.verb
            and ref.get("apiGroup", "") == self.group
            and resource == self.resource
            and (not self.names or ref.get("name") in self.names)
            and (self.namespace is None or ref.get("namespace") == self.namespace)
        )


def grants(manifest: str) -> list[Grant]:
    docs = [d for d in yaml.safe_load_all(manifest) if d]
    roles = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in docs}
    out: list[Grant] = []
    for binding in docs:
        if binding["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        ns = binding["metadata"].get("namespace") if binding["kind"] == "RoleBinding" else None
        ref = binding["roleRef"]
        role = roles.get((ref["kind"], ns if ref["kind"] == "Role" else None, ref["name"]))
        if role is None:
            continue
        accounts = [s["name"] for s in binding.get("subjects") or [] if s["kind"] == "ServiceAccount"]
        out += [g for account in accounts for g in _expand(account, role.get("rules") or [], ns)]
    return out


def _expand(account: str, rules: Iterable[dict[str, Any]], namespace: str | None) -> list[Grant]:
    return [
        Grant(account, group, resource, verb, tuple(rule.get("resourceNames") or ()), namespace)
        for rule in rules
        for group in rule.get("apiGroups") or []
        for resource in rule.get("resources") or []
        for verb in rule.get("verbs") or []
    ]


def uses(grant: Grant, events: Iterable[dict[str, Any]], *, namespace: str) -> int:
    user = f"system:serviceaccount:{namespace}:{grant.account}"
    return sum(
        1
        for e in events
        if e["user"]["username"] == user and (e.get("responseStatus") or {}).get("code") != 403 and grant.allows(e)
    )


def table(manifest: str, events: list[dict[str, Any]], *, namespace: str, prefix: str) -> dict[tuple[str, ...], int]:
    out: dict[tuple[str, ...], int] = {}
    for g in grants(manifest):
        key = (g.account.removeprefix(prefix), g.group, g.resource, g.verb)
        out[key] = out.get(key, 0) + uses(g, events, namespace=namespace)
    return out


def can_i(ns: str, work: str) -> dict[tuple[str, ...], bool]:
    """(component, ``kubectl auth can-i`` arguments...) -> the answer the chart must give: each
    component has what it needs and lacks the others' rights (release namespace ``ns``, a
    workload namespace ``work``)."""
    return {
        ("webhook", "list", "queues.scheduling.volcano.sh"): True,
        ("webhook", "create", "pods", "-n", work): False,
        ("webhook", "get", "secrets", "-n", ns): False,
        ("webhook", "patch", "podgroups.scheduling.volcano.sh", "-n", work): False,
        ("webhook", "create", "pods", "--subresource=binding", "-n", work): False,
        ("controllers", "create", "pods", "-n", work): True,
        ("controllers", "create", "pods", "--subresource=binding", "-n", work): False,
        ("controllers", "patch", "secrets/vb-webhook-tls", "-n", ns): True,
        ("controllers", "patch", "secrets/other", "-n", ns): False,
        ("controllers", "delete", "secrets", "-n", work): False,
        ("controllers", "create", "leases.coordination.k8s.io", "-n", work): False,
        ("scheduler", "create", "pods", "--subresource=binding", "-n", work): True,
        ("scheduler", "create", "pods", "-n", work): False,
        ("scheduler", "create", "secrets", "-n", ns): False,
        ("scheduler", "get", "secrets", "-n", ns): False,
        ("scheduler", "patch", "mutatingwebhookconfigurations.admissionregistration.k8s.io"): False,
    }
