"""The scheduler's integration tests share one control plane of their own, for this package.

Node capacities are then exact and no other test's pods or nodes interfere. Each test registers
its own nodes (removed afterwards) and runs its own scheduler under a unique ``schedulerName``,
so leftovers of an earlier test are never scheduled by a later one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from scheduler import configure
from scheduler.io import binder
from tests.support import apiserver, schedthread, simthread
from vbridge.localcluster import binaries, cluster
from vbridge.nodesim import nodes


@pytest.fixture(scope="package")
def lc(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.LocalCluster]:
    with apiserver.started(cluster.LocalCluster(tmp_path_factory.mktemp("sched-cluster"), bins=bins)) as own:
        yield own


@pytest.fixture(scope="package")
def api(lc: cluster.LocalCluster) -> Iterator[k8s.ApiClient]:
    with apiserver.client_of(lc) as out:
        yield out


@pytest.fixture
def ns(api: k8s.ApiClient) -> Iterator[str]:
    name = "sched-" + uuid.uuid4().hex[:8]
    core = k8s.CoreV1Api(api)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        # Force-remove what we made, so no PodGroup or pod lingers into the next test.
        custom = k8s.CustomObjectsApi(api)
        for pg in custom.list_namespaced_custom_object(*apiserver.PG, name, "podgroups")["items"]:
            custom.delete_namespaced_custom_object(*apiserver.PG, name, "podgroups", pg["metadata"]["name"])
        core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
        core.delete_namespace(name)


@pytest.fixture
def make_nodes(lc: cluster.LocalCluster, api: k8s.ApiClient) -> Iterator[Callable[..., list[str]]]:
    threads: list[simthread.SimThread] = []
    names: list[str] = []

    def make(count: int, **spec: Any) -> list[str]:
        specs = nodes.pool(count, prefix="n" + uuid.uuid4().hex[:6], **spec)
        threads.append(simthread.SimThread(lc.kubeconfig, specs).start())
        names.extend(s.name for s in specs)
        for spec in specs:
            # The TaintNodesByCondition admission plugin taints new nodes not-ready; with the node
            # lifecycle controller off, nobody lifts it. Do what that controller would.
            k8s.CoreV1Api(api).patch_node(spec.name, {"spec": {"taints": None}})
        return [s.name for s in specs]

    yield make
    for thread in threads:
        thread.stop()
    for name in names:
        k8s.CoreV1Api(api).delete_node(name)


@pytest.fixture
def scheduler_name() -> str:
    return "vb-" + uuid.uuid4().hex[:8]


@pytest.fixture
def run_scheduler(lc: cluster.LocalCluster, scheduler_name: str) -> Iterator[Callable[..., schedthread.SchedThread]]:
    threads: list[schedthread.SchedThread] = []

    def start(conf_text: str = "", hook: binder.Hook | None = None) -> schedthread.SchedThread:
        conf = configure.parse(conf_text, scheduler_name=scheduler_name)
        thread = schedthread.SchedThread(lc, conf, hook=hook, metrics_port=0)
        thread.start()
        threads.append(thread)
        return thread

    yield start
    for thread in threads:
        thread.stop()
