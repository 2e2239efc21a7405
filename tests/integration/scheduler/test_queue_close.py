"""A Closing queue becomes Closed only when the apiserver holds none of its PodGroups.

The PodGroup watch may lag the Queue watch: the close was counted with a PodGroup our cache
has not seen yet. The status writer is given exactly that cache (the queue, no PodGroup) and a
verdict of Closed; the queue must stay Closing until the PodGroup is really gone.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge.k8s import client, kubeconfigs
from scheduler.api import plan
from scheduler.io import cache as sched_cache
from scheduler.io import status
from tests.support import apiserver
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration


def closed(name: str) -> plan.Plan:
    verdict = plan.QueueVerdict(name, "Closed", 0, 0, 0, 0, 0, {})
    return plan.Plan(operations=(), podgroups=(), queues=(verdict,), pods=())


def test_a_closing_queue_stays_closing_while_the_apiserver_holds_its_podgroup(
    lc: cluster.LocalCluster, api: k8s.ApiClient, ns: str
) -> None:
    crd = k8s.CustomObjectsApi(api)
    name = "closing-" + uuid.uuid4().hex[:6]
    body = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}}
    crd.create_cluster_custom_object(*apiserver.PG, "queues", {**body, "spec": {"weight": 1}})
    try:
        crd.patch_cluster_custom_object_status(*apiserver.PG, "queues", name, {"status": {"state": "Closing"}})
        group = {"apiVersion": body["apiVersion"], "kind": "PodGroup", "metadata": {"name": "held"}}
        crd.create_namespaced_custom_object(*apiserver.PG, ns, "podgroups", {**group, "spec": {"queue": name}})

        def state() -> str:
            live: dict[str, Any] = crd.get_cluster_custom_object(*apiserver.PG, "queues", name)
            return str((live.get("status") or {}).get("state"))

        async def write() -> None:
            async with client.Client(kubeconfigs.load(lc.kubeconfig)) as conn:
                lagging = sched_cache.Cache(conn)  # holds the queue, not yet its PodGroup
                lagging.store["queues"][name] = crd.get_cluster_custom_object(*apiserver.PG, "queues", name)
                await status.StatusWriter(conn, lagging).write(closed(name))

        asyncio.run(write())
        assert state() == "Closing"

        crd.delete_namespaced_custom_object(*apiserver.PG, ns, "podgroups", "held")
        apiserver.eventually(
            lambda: apiserver.gone(lambda: crd.get_namespaced_custom_object(*apiserver.PG, ns, "podgroups", "held")),
            what="the PodGroup to be gone",
        )
        asyncio.run(write())
        assert state() == "Closed"
    finally:
        crd.delete_cluster_custom_object(*apiserver.PG, "queues", name)
