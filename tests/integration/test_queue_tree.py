"""A queue tree applied from one file is admitted whole: a parent made a moment before its child
is read from the apiserver when the webhook's facts have not shown it yet (``bridge.facts``).

Each chain is POSTed back to back, parent first, as ``kubectl apply -f`` sends a file: the
child's review often reaches our webhook before the parent's watch event does.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, bridgethread

pytestmark = pytest.mark.integration
DEPTH, TRIES = 200, 10


def body(name: str, parent: str | None) -> dict[str, object]:
    spec: dict[str, object] = {"weight": 1}
    if parent:
        spec["parent"] = parent
    return {"apiVersion": "/".join(apiserver.PG), "kind": "Queue", "metadata": {"name": name}, "spec": spec}


@pytest.fixture
def made(api_client: k8s.ApiClient) -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    crd = k8s.CustomObjectsApi(api_client)
    for name in reversed(names):
        crd.delete_cluster_custom_object(*apiserver.PG, "queues", name)


def test_a_200_deep_chain_from_one_file_is_never_denied(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, made: list[str]
) -> None:
    crd = k8s.CustomObjectsApi(api_client)
    assert bridge.bridge is not None
    facts = bridge.bridge.facts
    reads_before = facts.reads
    denials: list[str] = []
    for _ in range(TRIES):
        tag = uuid.uuid4().hex[:6]
        parent = None
        for depth in range(DEPTH):
            name = f"tree-{tag}-{depth}"
            try:
                crd.create_cluster_custom_object(*apiserver.PG, "queues", body(name, parent))
            except k8s.ApiException as exc:
                denials.append(f"{name}: {exc.status} {exc.body}")
                break  # the rest of this chain has no parent
            made.append(name)
            parent = name
    assert denials == [], f"{len(denials)} of {TRIES} chains denied: {denials[:3]}"
    assert len(made) == DEPTH * TRIES
    print(f"{DEPTH * TRIES} queues in {TRIES} chains; parents read from the apiserver: {facts.reads - reads_before}")


def test_a_queue_missing_from_the_facts_is_read_and_a_missing_one_is_not_invented(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, made: list[str]
) -> None:
    """The read itself, from a thread other than the facts' loop (as the webhook's workers are)."""
    assert bridge.bridge is not None
    facts = bridge.bridge.facts
    name = "read-" + uuid.uuid4().hex[:6]
    k8s.CustomObjectsApi(api_client).create_cluster_custom_object(*apiserver.PG, "queues", body(name, "root"))
    made.append(name)
    before = facts.reads
    found = facts.read_queue(name)
    assert found is not None and found.parent == "root" and facts.reads == before + 1
    assert facts.read_queue("no-such-" + name) is None
    assert facts.reads == before + 2
    ctx = facts.context("default", scheduler_name="volcano")
    assert ctx.queues is not None and "no-such-" + name not in ctx.queues
