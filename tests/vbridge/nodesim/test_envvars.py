from __future__ import annotations

import base64
from typing import Any

import pytest

from vbridge.nodesim import envvars

POD: dict[str, Any] = {
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "labels": {"app": "x"}},
    "spec": {"nodeName": "n0", "serviceAccountName": "sa"},
    "status": {"podIP": "198.51.100.3", "hostIP": "198.51.100.1", "podIPs": [{"ip": "198.51.100.3"}]},
}
CMS = {
    "settings": {
        "data": {"greeting": "hello", "level": "3"},
        "binaryData": {"blob": base64.b64encode(b"\x00").decode()},
    }
}
SECRETS = {"words": {"data": {"word": base64.b64encode(b"swordfish").decode()}}}


def test_expand_follows_kubernetes_rules() -> None:
    env = {"A": "1", "B": "two"}
    assert envvars.expand("$(A)-$(B)", env) == "1-two"
    assert envvars.expand("$$(A) $(C) $(A", env) == "$(A) $(C) $(A"
    assert envvars.expand("cost: $5", env) == "cost: $5"


def test_fields_of_the_downward_api() -> None:
    assert envvars.field(POD, "metadata.namespace") == "ns"
    assert envvars.field(POD, "status.podIP") == "198.51.100.3"
    assert envvars.field(POD, "spec.serviceAccountName") == "sa"
    assert envvars.field({"spec": {}}, "spec.serviceAccountName") == "default"
    assert envvars.field(POD, "metadata.labels['app']") == "x"
    assert envvars.field(POD, "metadata.labels") == 'app="x"'
    with pytest.raises(ValueError):
        envvars.field(POD, "spec.nonsense")


def test_resolve_order_refs_and_expansion() -> None:
    container = {
        "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "CM_"}],
        "env": [
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "G", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "greeting"}}},
            {"name": "W", "valueFrom": {"secretKeyRef": {"name": "words", "key": "word"}}},
            {"name": "OPT", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k", "optional": True}}},
            {"name": "SAID", "value": "$(G) in $(NS) via $(KUBERNETES_SERVICE_HOST)"},
            {"name": "CM_level", "value": "override"},
        ],
    }
    env = envvars.resolve(container, POD, configmaps=CMS, secrets=SECRETS, base=envvars.in_cluster("127.0.0.1", 6443))
    assert env["NS"] == "ns" and env["G"] == "hello" and env["W"] == "swordfish"
    assert env["SAID"] == "hello in ns via 127.0.0.1"
    assert env["CM_greeting"] == "hello" and env["CM_blob"] == "\x00" and env["CM_level"] == "override"
    assert "OPT" not in env
    assert env["KUBERNETES_SERVICE_PORT"] == "6443"


@pytest.mark.parametrize(
    "item",
    [
        {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "missing"}}},
        {"name": "X", "valueFrom": {"secretKeyRef": {"name": "absent", "key": "k"}}},
    ],
)
def test_a_missing_required_reference_makes_the_container_wait(item: dict[str, Any]) -> None:
    with pytest.raises(envvars.Missing):
        envvars.resolve({"env": [item]}, POD, configmaps=CMS, secrets=SECRETS)
    with pytest.raises(envvars.Missing):
        envvars.resolve({"envFrom": [{"secretRef": {"name": "absent"}}]}, POD, configmaps={}, secrets={})
