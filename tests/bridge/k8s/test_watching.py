"""bridge.k8s.watching: a relist reports only the difference; backoff grows, is capped and jittered."""

from __future__ import annotations

import random
from typing import Any

from bridge.k8s import watching


def obj(name: str, rv: str, namespace: str | None = "ns") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": rv}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


def test_first_list_reports_everything_as_added() -> None:
    known: dict[str, str] = {}
    events = watching.relist(known, [obj("a", "1"), obj("b", "2")])
    assert [(k, o["metadata"]["name"]) for k, o in events] == [("ADDED", "a"), ("ADDED", "b")]
    assert known == {"ns/a": "1", "ns/b": "2"}


def test_relist_reports_changed_and_vanished_objects_only() -> None:
    known = {"ns/a": "1", "ns/b": "2", "/node-1": "3"}
    events = watching.relist(known, [obj("a", "1"), obj("b", "5"), obj("c", "6")])
    assert [(k, o["metadata"]["name"]) for k, o in events] == [
        ("MODIFIED", "b"),
        ("ADDED", "c"),
        ("DELETED", "node-1"),
    ]
    deleted = events[-1][1]["metadata"]
    assert deleted["namespace"] is None  # cluster-scoped: no namespace in the stub
    assert known == {"ns/a": "1", "ns/b": "5", "ns/c": "6"}


def test_a_namespaced_deletion_stub_keeps_its_namespace() -> None:
    known = {"team/x": "1"}
    assert watching.relist(known, []) == [("DELETED", {"metadata": {"namespace": "team", "name": "x"}})]
    assert known == {}


def test_backoff_grows_to_its_cap_and_jitter_stays_below_the_delay() -> None:
    backoff = watching.Backoff(first=0.2, most=10.0, factor=2.0)
    delays = []
    delay = 0.0
    for _ in range(10):
        delay = backoff.next(delay)
        delays.append(delay)
    assert delays[:4] == [0.2, 0.4, 0.8, 1.6]
    assert delays[-1] == 10.0
    rng = random.Random(7)
    jittered = [backoff.jittered(4.0, rng) for _ in range(200)]
    assert all(2.0 <= j <= 4.0 for j in jittered)
    assert len(set(jittered)) > 100  # spread, so retrying watchers do not arrive together
