"""The owner read from a service-account token, and adoption of an ownerReference."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from bridge.k8s import owners


def token(claims: Any) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2ln"


BOUND = {
    "iss": "https://kubernetes.default.svc",
    "kubernetes.io": {
        "namespace": "vbridge-system",
        "pod": {"name": "vb-controllers-0", "uid": "p-1"},
        "serviceaccount": {"name": "vb-controllers", "uid": "sa-1"},
    },
}
LEGACY = {
    "kubernetes.io/serviceaccount/namespace": "ns",
    "kubernetes.io/serviceaccount/service-account.name": "old",
    "kubernetes.io/serviceaccount/service-account.uid": "sa-2",
}


def test_a_bound_token_names_its_service_account() -> None:
    owner = owners.from_token(token(BOUND))
    assert owner == owners.Owner("vbridge-system", "vb-controllers", "sa-1")
    assert owner.reference("vbridge-system") == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "name": "vb-controllers",
        "uid": "sa-1",
    }


def test_a_legacy_token_names_its_service_account() -> None:
    assert owners.from_token(token(LEGACY)) == owners.Owner("ns", "old", "sa-2")


def test_no_reference_across_namespaces() -> None:
    owner = owners.from_token(token(BOUND))
    assert owner is not None and owner.reference("elsewhere") is None


@pytest.mark.parametrize(
    "credential",
    [
        None,
        "",
        "opaque-static-token",
        "a.b",
        "a.!!!.c",
        "a." + base64.urlsafe_b64encode(b"not json").decode() + ".c",
        token(["a", "list"]),
        token({"sub": "system:admin"}),
        token({"kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "x"}}}),
        token({"kubernetes.io": {"namespace": 3, "serviceaccount": {"name": "x", "uid": "u"}}}),
    ],
)
def test_other_credentials_name_no_owner(credential: str | None) -> None:
    assert owners.from_token(credential) is None


def test_adopt_adds_the_reference_once() -> None:
    ref = {"apiVersion": "v1", "kind": "ServiceAccount", "name": "sa", "uid": "u1"}
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u0"}
    meta = {"name": "lease", "ownerReferences": [other]}
    adopted = owners.adopt(meta, ref)
    assert adopted["ownerReferences"] == [other, ref]
    assert owners.adopt(adopted, ref) == adopted
    assert meta["ownerReferences"] == [other]  # the input is not changed
    assert owners.adopt(meta, None) is meta
