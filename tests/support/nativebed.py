"""A test bed for Kubernetes' own gang scheduling: the Workload API served, kube-scheduler placing.

``run(bins, workdir, ...)`` is a context manager (``started``: the same, yielding the
``LocalCluster`` too): a control plane with ``native_gangs`` (the
``GenericWorkload`` gate and ``scheduling.k8s.io/v1beta1``), ``nodes`` simulated nodes of
``cpu`` each (made schedulable: no node lifecycle controller lifts their not-ready taint here),
optionally our bridge on ``backend`` (webhooks and reconcilers) and the upstream ``operator``
(as ``operator_env`` runs it, with ``spark``'s spark-submit: a missing binary skips), kube-scheduler as
``scheduler_name``, our scheduler on the native backend (its queue half: it admits groups and
lifts their pods' queue gate; ``gate=False`` leaves it out, and the gate on), and ``namespace``;
it yields a kubernetes client. Everything stops on exit. ``plane`` is the control plane, nodes
and kube-scheduler alone (for tests that run our scheduler themselves), yielding the cluster too.
``native_podgroup`` reads a native PodGroup; ``gang_placed`` checks a job's gang end to end: made
gated, the gate lifted by our scheduler, bound whole by kube-scheduler.
"""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import Iterator
from typing import Any

from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bridge import defaults, keys
from scheduler import configure
from tests.support import apiserver, bridgethread, operator_env, schedthread, simthread
from vbridge.localcluster import binaries, cluster, kubescheduler, operators
from vbridge.nodesim import nodes

__all__ = ["gang_placed", "native_podgroup", "plane", "run", "started"]


@contextlib.contextmanager
def run(bins: binaries.Binaries, workdir: pathlib.Path, **options: Any) -> Iterator[k8s.ApiClient]:
    with started(bins, workdir, **options) as (_, client):
        yield client


@contextlib.contextmanager
def started(
    bins: binaries.Binaries,
    workdir: pathlib.Path,
    *,
    namespace: str,
    prefix: str,
    nodes_count: int = 3,
    cpu: str = "4",
    scheduler_name: str = "default-scheduler",
    backend: str | None = None,
    operator: str | None = None,
    spark: pathlib.Path | None = None,
    gate: bool = True,
) -> Iterator[tuple[cluster.LocalCluster, k8s.ApiClient]]:
    with contextlib.ExitStack() as stack:
        lc, client = _plane(stack, bins, workdir, prefix=prefix, nodes_count=nodes_count, cpu=cpu)
        if backend is not None:
            stack.callback(bridgethread.BridgeThread(lc, backend=backend).start().stop)
        if operator is not None:
            stack.enter_context(
                operators.Operator(operator, lc, binary=operator_env.operator_binary(operator), spark=spark)
            )
        stack.callback(kubescheduler.start(lc, bins, scheduler_name=scheduler_name).stop)
        if gate:
            conf = configure.parse("", backend=defaults.NATIVE, scheduler_name=scheduler_name)
            stack.callback(schedthread.SchedThread(lc, conf).start().stop)
        k8s.CoreV1Api(client).create_namespace({"metadata": {"name": namespace}})
        yield lc, client


@contextlib.contextmanager
def plane(
    bins: binaries.Binaries, workdir: pathlib.Path, *, prefix: str, nodes_count: int = 3, cpu: str = "4"
) -> Iterator[tuple[cluster.LocalCluster, k8s.ApiClient]]:
    """``run``'s control plane, nodes and kube-scheduler (as ``default-scheduler``) alone, for
    tests that run our scheduler themselves, each with its own conf: (cluster, client)."""
    with contextlib.ExitStack() as stack:
        lc, client = _plane(stack, bins, workdir, prefix=prefix, nodes_count=nodes_count, cpu=cpu)
        stack.callback(kubescheduler.start(lc, bins).stop)
        yield lc, client


def _plane(
    stack: contextlib.ExitStack,
    bins: binaries.Binaries,
    workdir: pathlib.Path,
    *,
    prefix: str,
    nodes_count: int,
    cpu: str,
) -> tuple[cluster.LocalCluster, k8s.ApiClient]:
    lc = stack.enter_context(cluster.LocalCluster(workdir, bins=bins, native_gangs=True))
    specs = nodes.pool(nodes_count, prefix=prefix, cpu=cpu, memory="16Gi")
    stack.callback(simthread.SimThread(lc.kubeconfig, specs).start().stop)
    client = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
    stack.callback(client.close)
    for i in range(nodes_count):  # no node lifecycle controller lifts the not-ready taint here
        k8s.CoreV1Api(client).patch_node(f"{prefix}-{i}", {"spec": {"taints": None}})
    return lc, client


def native_podgroup(api: k8s.ApiClient, namespace: str, name: str) -> dict[str, Any] | None:
    """The native PodGroup ``name`` (``scheduling.k8s.io/v1beta1``), None while it does not exist."""
    try:
        out: dict[str, Any] = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            "scheduling.k8s.io", "v1beta1", namespace, "podgroups", name
        )
        return out
    except k8s.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def gang_placed(api: k8s.ApiClient, namespace: str, selector: str, group: str, size: int) -> list[dict[str, Any]]:
    """The native PodGroup ``group`` gangs ``size``; the ``size`` pods of ``selector`` are on
    kube-scheduler and joined to it; once our scheduler lifted the queue gate all are bound.
    Returns the bound pods."""
    found = apiserver.eventually(lambda: native_podgroup(api, namespace, group), timeout=60, what="the native group")
    assert found["spec"]["schedulingPolicy"] == {"gang": {"minCount": size}}

    def pods(bound: bool) -> list[dict[str, Any]] | None:
        listed = apiserver.pods(api, namespace, selector)
        whole = len(listed) >= size and (not bound or all(p["spec"].get("nodeName") for p in listed))
        return listed if whole else None

    for pod in apiserver.eventually(lambda: pods(False), timeout=120, what=f"{group}'s pods"):
        assert pod["spec"]["schedulerName"] == "default-scheduler"
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": group}
        # made gated: our scheduler lifts the gate (below) once the queue admits the group
        assert not pod["spec"].get("nodeName") or not pod["spec"].get("schedulingGates")
    placed: list[dict[str, Any]] = apiserver.eventually(
        lambda: pods(True), timeout=120, what=f"{group} ungated by our queue and bound whole by kube-scheduler"
    )
    for pod in placed:
        assert keys.QUEUE_GATE not in [g["name"] for g in pod["spec"].get("schedulingGates") or []]
    return placed
