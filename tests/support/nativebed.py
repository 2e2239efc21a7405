"""A test bed for Kubernetes' own gang scheduling: the Workload API served, kube-scheduler placing.

``run(bins, workdir, ...)`` is a context manager: a control plane with ``native_gangs`` (the
``GenericWorkload`` gate and ``scheduling.k8s.io/v1beta1``), ``nodes`` simulated nodes of
``cpu`` each (made schedulable: no node lifecycle controller lifts their not-ready taint here),
optionally our bridge on ``backend`` (webhooks and reconcilers) and the upstream ``operator``
(as ``operator_env`` runs it, with ``spark``'s spark-submit: a missing binary skips), kube-scheduler as
``scheduler_name``, and ``namespace``; it yields a kubernetes client. Everything stops on exit.
"""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import Iterator

from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.support import bridgethread, operator_env, simthread
from vbridge.localcluster import binaries, cluster, kubescheduler, operators
from vbridge.nodesim import nodes

__all__ = ["run"]


@contextlib.contextmanager
def run(
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
) -> Iterator[k8s.ApiClient]:
    with contextlib.ExitStack() as stack:
        lc = stack.enter_context(cluster.LocalCluster(workdir, bins=bins, native_gangs=True))
        specs = nodes.pool(nodes_count, prefix=prefix, cpu=cpu, memory="16Gi")
        stack.callback(simthread.SimThread(lc.kubeconfig, specs).start().stop)
        client = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
        stack.callback(client.close)
        for i in range(nodes_count):
            k8s.CoreV1Api(client).patch_node(f"{prefix}-{i}", {"spec": {"taints": None}})
        if backend is not None:
            stack.callback(bridgethread.BridgeThread(lc, backend=backend).start().stop)
        if operator is not None:
            stack.enter_context(
                operators.Operator(operator, lc, binary=operator_env.operator_binary(operator), spark=spark)
            )
        stack.callback(kubescheduler.start(lc, bins, scheduler_name=scheduler_name).stop)
        k8s.CoreV1Api(client).create_namespace({"metadata": {"name": namespace}})
        yield client
