"""Handing a Lease back (client-go's ReleaseOnCancel), pure: what the PUT carries."""

from __future__ import annotations

import pytest

from bridge import errors
from bridge.k8s import client, kubeconfigs, lease

HELD = {
    "apiVersion": lease.API,
    "kind": "Lease",
    "metadata": {"name": "l", "namespace": "ns", "resourceVersion": "41"},
    "spec": {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "acquireTime": "2024-01-01T00:00:00.000000Z",
        "renewTime": "2024-01-01T00:05:00.000000Z",
        "leaseTransitions": 3,
    },
}


def test_release_empties_the_holder_and_keeps_the_version_and_transitions() -> None:
    out = lease.released(HELD, "me", now="2024-01-01T00:06:00.000000Z")
    assert out is not None
    assert out["metadata"]["resourceVersion"] == "41"  # the PUT is guarded by what we read
    assert out["spec"] == {
        "holderIdentity": "",
        "leaseDurationSeconds": 1,
        "acquireTime": "2024-01-01T00:06:00.000000Z",
        "renewTime": "2024-01-01T00:06:00.000000Z",
        "leaseTransitions": 3,
    }
    assert HELD["spec"]["holderIdentity"] == "me"  # the record read is left as it was


def test_nothing_to_release_when_someone_else_holds_it() -> None:
    assert lease.released(HELD, "other", now="x") is None
    assert lease.released({"metadata": {}}, "me", now="x") is None


def test_timing_must_be_ordered() -> None:
    api = client.Client(
        kubeconfigs.Connection(server="https://127.0.0.1:1", ca_file=None, cert_file=None, key_file=None)
    )
    with pytest.raises(errors.ConfigError):
        lease.Elector(api, name="l", identity="me", lease_seconds=2, renew_seconds=3, retry_seconds=1)
    assert not lease.Elector(api, name="l", identity="me").is_leader()
