"""podspec: pod affinity terms and topology spread constraints parsed with kube-scheduler's defaults."""

from __future__ import annotations

from typing import Any

from scheduler.api import podspec

ZONE = "topology.kubernetes.io/zone"


def _term(**extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE, **extra}


def _anti(*terms: dict[str, Any]) -> podspec.Placement:
    spec = {"affinity": {"podAntiAffinity": {podspec.REQUIRED: list(terms)}}}
    return podspec.parse_placement(spec, "ns")


def test_a_term_without_namespaces_looks_in_its_pods_namespace() -> None:
    (term,) = _anti(_term()).anti_affinity
    assert term.pods.matches("ns", {"app": "db"})
    assert not term.pods.matches("other", {"app": "db"})
    assert not term.pods.matches("ns", {"app": "web"})


def test_an_empty_namespace_selector_looks_everywhere_and_names_add_to_it() -> None:
    (everywhere,) = _anti(_term(namespaceSelector={})).anti_affinity
    assert everywhere.pods.matches("any", {"app": "db"})
    (by_name,) = _anti(
        _term(namespaces=["a"], namespaceSelector={"matchLabels": {podspec.NAMESPACE_NAME: "b"}})
    ).anti_affinity
    assert [by_name.pods.matches(ns, {"app": "db"}) for ns in ("a", "b", "ns")] == [True, True, False]


def test_a_null_label_selector_selects_no_pod() -> None:
    (term,) = _anti({"topologyKey": ZONE}).anti_affinity
    assert term.pods.selector is None
    assert not term.pods.matches("ns", {})


def test_preferred_terms_keep_their_weight() -> None:
    spec = {"affinity": {"podAffinity": {podspec.PREFERRED: [{"weight": 30, "podAffinityTerm": _term()}]}}}
    placement = podspec.parse_placement(spec, "ns")
    assert [(t.weight, t.topology_key) for t in placement.preferred_affinity] == [(30, ZONE)]
    assert placement.pod_terms and not placement.affinity


def test_spread_defaults_are_kube_schedulers() -> None:
    spec = {"topologySpreadConstraints": [{"maxSkew": 2, "topologyKey": ZONE, "labelSelector": {}}]}
    (c,) = podspec.parse_placement(spec, "ns").spread
    assert (c.max_skew, c.hard, c.min_domains, c.honor_affinity, c.honor_taints) == (2, True, 1, True, False)
    assert c.pods.namespaces.names == frozenset({"ns"})


def test_spread_options_and_match_label_keys() -> None:
    rule = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "w"}},
        "matchLabelKeys": ["rev", "absent"],
        "minDomains": 3,
        "nodeAffinityPolicy": "Ignore",
        "nodeTaintsPolicy": "Honor",
    }
    (c,) = podspec.parse_placement({"topologySpreadConstraints": [rule]}, "ns", {"app": "w", "rev": "7"}).spread
    assert (c.hard, c.min_domains, c.honor_affinity, c.honor_taints) == (False, 3, False, True)
    assert c.pods.matches("ns", {"app": "w", "rev": "7"})
    assert not c.pods.matches("ns", {"app": "w", "rev": "6"})  # the pod's own revision joined the selector


def test_a_pod_without_pod_terms_says_so_cheaply() -> None:
    assert not podspec.parse_placement({"nodeSelector": {"a": "b"}}, "ns").pod_terms
    assert not podspec.has_pod_terms({"affinity": {"nodeAffinity": {}}})
    assert podspec.has_pod_terms({"affinity": {"podAffinity": {podspec.REQUIRED: [_term()]}}})
