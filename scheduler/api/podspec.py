"""Placement constraints of a pod (selectors, affinity, tolerations, topology spread) as hashable values. Pure.

Equal constraints give equal values, so a cycle evaluates each distinct constraint set over
the nodes once and reuses the mask for every pod that shares it. Pod affinity terms and
topology spread constraints are parsed as kube-scheduler reads them: a term without
``namespaces`` and ``namespaceSelector`` looks in its pod's namespace, an empty
``namespaceSelector`` in every namespace; a null ``labelSelector`` selects no pod; a spread
constraint counts pods of its pod's namespace, ``matchLabelKeys`` adds the pod's own values
to its selector, ``minDomains`` defaults to 1, ``nodeAffinityPolicy`` to Honor and
``nodeTaintsPolicy`` to Ignore.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = [
    "BLOCKING",
    "HOSTNAME",
    "NAMESPACE_NAME",
    "PREFERRED",
    "REQUIRED",
    "LabelSelector",
    "Namespaces",
    "Placement",
    "PodSelector",
    "PodTerm",
    "Requirement",
    "Spread",
    "Taint",
    "Toleration",
    "has_pod_terms",
    "matches",
    "parse_placement",
    "selector",
]

HOSTNAME = "kubernetes.io/hostname"
NAMESPACE_NAME = "kubernetes.io/metadata.name"  # the label every namespace has: its name
BLOCKING: tuple[str, ...] = ("NoSchedule", "NoExecute")  # taint effects that keep a pod off a node
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


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
class Namespaces:
    """The namespaces a pod affinity term looks in: ``names`` plus those ``selector`` picks.

    A namespace's only label known here is ``kubernetes.io/metadata.name`` (set on every
    namespace by the apiserver), so a namespaceSelector on any other label selects none.
    """

    names: frozenset[str]
    selector: LabelSelector | None = None  # None: no namespaceSelector; no requirements: every namespace

    def __contains__(self, namespace: object) -> bool:
        if namespace in self.names:
            return True
        return self.selector is not None and self.selector.matches({NAMESPACE_NAME: str(namespace)})


@dataclasses.dataclass(frozen=True, slots=True)
class PodSelector:
    """Pods in ``namespaces`` whose labels ``selector`` matches (None, a null selector: no pod)."""

    namespaces: Namespaces
    selector: LabelSelector | None

    def matches(self, namespace: str, labels: Mapping[str, str]) -> bool:
        return self.selector is not None and namespace in self.namespaces and self.selector.matches(labels)


@dataclasses.dataclass(frozen=True, slots=True)
class PodTerm:
    """A pod affinity or anti-affinity term, its namespaces resolved against its pod's."""

    pods: PodSelector
    topology_key: str
    weight: int = 0  # a preferred term's weight; 0 for a required one


@dataclasses.dataclass(frozen=True, slots=True)
class Spread:
    """A topologySpreadConstraint, with kube-scheduler's defaults filled in."""

    max_skew: int
    topology_key: str
    hard: bool  # whenUnsatisfiable DoNotSchedule (the default); False: ScheduleAnyway
    pods: PodSelector  # the pod's own namespace; matchLabelKeys merged into the selector
    min_domains: int = 1
    honor_affinity: bool = True  # nodeAffinityPolicy Honor (default) | Ignore
    honor_taints: bool = False  # nodeTaintsPolicy Honor | Ignore (default)


@dataclasses.dataclass(frozen=True, slots=True)
class Placement:
    node_selector: tuple[tuple[str, str], ...] = ()
    node_affinity: tuple[LabelSelector, ...] = ()  # OR of terms; empty means no constraint
    tolerations: tuple[Toleration, ...] = ()
    affinity: tuple[PodTerm, ...] = ()  # required pod affinity
    anti_affinity: tuple[PodTerm, ...] = ()  # required pod anti-affinity
    preferred_affinity: tuple[PodTerm, ...] = ()
    preferred_anti_affinity: tuple[PodTerm, ...] = ()
    spread: tuple[Spread, ...] = ()
    pod_terms: bool = False  # any of the five above: where the pod goes depends on other pods

    def selects(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` passes nodeSelector and required node affinity."""
        if any(labels.get(key) != value for key, value in self.node_selector):
            return False
        return not (self.node_affinity and not any(term.matches(labels) for term in self.node_affinity))

    def tolerates(self, taints: tuple[Taint, ...]) -> bool:
        """Whether the pod tolerates every NoSchedule and NoExecute taint of ``taints``."""
        return all(
            any(tol.tolerates(taint) for tol in self.tolerations) for taint in taints if taint.effect in BLOCKING
        )


def matches(selector: Mapping[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector dict (matchLabels + matchExpressions) as a value."""
    selector = selector or {}
    reqs = [Requirement(k, "In", (str(v),)) for k, v in sorted((selector.get("matchLabels") or {}).items())]
    reqs += [_requirement(expr) for expr in selector.get("matchExpressions") or []]
    return LabelSelector(tuple(reqs))


def selector(raw: Mapping[str, Any] | None) -> LabelSelector | None:
    """As ``matches``, but a missing (null) selector is None: it selects nothing, as in Kubernetes."""
    return None if raw is None else matches(raw)


def _requirement(expr: Mapping[str, Any]) -> Requirement:
    return Requirement(str(expr.get("key", "")), str(expr.get("operator", "")), tuple(expr.get("values") or ()))


def _terms(raw: Any, namespace: str, *, weighted: bool) -> tuple[PodTerm, ...]:
    out = []
    for item in raw or []:
        item = item or {}
        term = (item.get("podAffinityTerm") or {}) if weighted else item
        ns_selector = term.get("namespaceSelector")
        names = frozenset(term.get("namespaces") or ())
        if not names and ns_selector is None:
            names = frozenset((namespace,))
        pods = PodSelector(Namespaces(names, selector(ns_selector)), selector(term.get("labelSelector")))
        weight = int(item.get("weight") or 0) if weighted else 0
        out.append(PodTerm(pods, str(term.get("topologyKey", "")), weight))
    return tuple(out)


def _spread(raw: Any, namespace: str, labels: Mapping[str, str]) -> tuple[Spread, ...]:
    out = []
    for item in raw or []:
        chosen = selector(item.get("labelSelector"))
        keys = [k for k in item.get("matchLabelKeys") or () if k in labels]
        if keys and chosen is not None:  # the pod's own values for these keys join the selector
            chosen = LabelSelector((*(Requirement(k, "In", (labels[k],)) for k in keys), *chosen.requirements))
        out.append(
            Spread(
                max_skew=int(item.get("maxSkew") or 1),
                topology_key=str(item.get("topologyKey", "")),
                hard=item.get("whenUnsatisfiable") != "ScheduleAnyway",
                pods=PodSelector(Namespaces(frozenset((namespace,))), chosen),
                min_domains=int(item.get("minDomains") or 1),
                honor_affinity=item.get("nodeAffinityPolicy") != "Ignore",
                honor_taints=item.get("nodeTaintsPolicy") == "Honor",
            )
        )
    return tuple(out)


def parse_placement(spec: Mapping[str, Any], namespace: str, labels: Mapping[str, str] | None = None) -> Placement:
    affinity = spec.get("affinity") or {}
    required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = []
    for term in required.get("nodeSelectorTerms") or []:
        reqs = [_requirement(e) for e in term.get("matchExpressions") or []]
        # matchFields only supports metadata.name; model it as the hostname label.
        reqs += [dataclasses.replace(_requirement(e), key=HOSTNAME) for e in term.get("matchFields") or []]
        terms.append(LabelSelector(tuple(reqs)))
    tolerations = tuple(
        Toleration(
            str(t.get("key") or ""),
            str(t.get("operator") or "Equal"),
            str(t.get("value") or ""),
            str(t.get("effect") or ""),
        )
        for t in spec.get("tolerations") or []
    )
    pod, anti = affinity.get("podAffinity") or {}, affinity.get("podAntiAffinity") or {}
    required, avoided = (
        _terms(pod.get(REQUIRED), namespace, weighted=False),
        _terms(anti.get(REQUIRED), namespace, weighted=False),
    )
    preferred, disliked = (
        _terms(pod.get(PREFERRED), namespace, weighted=True),
        _terms(anti.get(PREFERRED), namespace, weighted=True),
    )
    spread = _spread(spec.get("topologySpreadConstraints"), namespace, labels or {})
    return Placement(
        node_selector=tuple(sorted((str(k), str(v)) for k, v in (spec.get("nodeSelector") or {}).items())),
        node_affinity=tuple(terms),
        tolerations=tolerations,
        affinity=required,
        anti_affinity=avoided,
        preferred_affinity=preferred,
        preferred_anti_affinity=disliked,
        spread=spread,
        pod_terms=bool(required or avoided or preferred or disliked or spread),
    )


def has_pod_terms(spec: Mapping[str, Any]) -> bool:
    """Whether the pod spec has pod affinity or anti-affinity (cheap: no parsing)."""
    affinity = spec.get("affinity") or {}
    return bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))
