"""Placement constraints of a pod (selectors, affinity, tolerations) as hashable values. Pure.

Equal constraints give equal values, so a cycle evaluates each distinct constraint set over
the nodes once and reuses the mask for every pod that shares it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["LabelSelector", "Placement", "Requirement", "Taint", "Toleration", "matches", "parse_placement"]

HOSTNAME = "kubernetes.io/hostname"


@dataclasses.dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...] = ()

    def allows(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.operator == "In":
            return present and value in self.values
        if self.operator == "NotIn":
            return not present or value not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator in ("Gt", "Lt") and present and self.values:
            try:
                left, right = int(value), int(self.values[0])
            except ValueError:
                return False
            return left > right if self.operator == "Gt" else left < right
        return False


@dataclasses.dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(req.allows(labels) for req in self.requirements)


@dataclasses.dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclasses.dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str  # Equal | Exists
    value: str
    effect: str  # "" tolerates every effect

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if not self.key:  # empty key with Exists tolerates everything
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value


@dataclasses.dataclass(frozen=True, slots=True)
class AntiAffinity:
    """A required pod anti-affinity term; only the hostname topology is enforced."""

    selector: LabelSelector
    namespaces: tuple[str, ...]
    topology_key: str


@dataclasses.dataclass(frozen=True, slots=True)
class Placement:
    node_selector: tuple[tuple[str, str], ...] = ()
    node_affinity: tuple[LabelSelector, ...] = ()  # OR of terms; empty means no constraint
    tolerations: tuple[Toleration, ...] = ()
    anti_affinity: tuple[AntiAffinity, ...] = ()


def matches(selector: Mapping[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector dict (matchLabels + matchExpressions) as a value."""
    selector = selector or {}
    reqs = [Requirement(k, "In", (str(v),)) for k, v in sorted((selector.get("matchLabels") or {}).items())]
    reqs += [_requirement(expr) for expr in selector.get("matchExpressions") or []]
    return LabelSelector(tuple(reqs))


def _requirement(expr: Mapping[str, Any]) -> Requirement:
    return Requirement(str(expr.get("key", "")), str(expr.get("operator", "")), tuple(expr.get("values") or ()))


def parse_placement(spec: Mapping[str, Any], namespace: str) -> Placement:
    affinity = spec.get("affinity") or {}
    required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = []
    for term in required.get("nodeSelectorTerms") or []:
        reqs = [_requirement(e) for e in term.get("matchExpressions") or []]
        # matchFields only supports metadata.name; model it as the hostname label.
        reqs += [dataclasses.replace(_requirement(e), key=HOSTNAME) for e in term.get("matchFields") or []]
        terms.append(LabelSelector(tuple(reqs)))
    anti = []
    pod_anti = (affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
    for term in pod_anti:
        namespaces = tuple(term.get("namespaces") or (namespace,))
        anti.append(AntiAffinity(matches(term.get("labelSelector")), namespaces, str(term.get("topologyKey", ""))))
    tolerations = tuple(
        Toleration(
            str(t.get("key") or ""),
            str(t.get("operator") or "Equal"),
            str(t.get("value") or ""),
            str(t.get("effect") or ""),
        )
        for t in spec.get("tolerations") or []
    )
    return Placement(
        node_selector=tuple(sorted((str(k), str(v)) for k, v in (spec.get("nodeSelector") or {}).items())),
        node_affinity=tuple(terms),
        tolerations=tolerations,
        anti_affinity=tuple(anti),
    )
