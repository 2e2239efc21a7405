"""The standalone helm test bed (``tests/integration/test_helm_install.py``).

``running(bins, work)``: ``helminstall.BareCluster`` (no CRDs, no Queues, an audit log of the
release namespace's ServiceAccounts) with the operators' CRDs a user's cluster has (TFJob and
PyTorchJob, MPIJob v2, SparkApplication, JobSet: the controllers' grants on each are used), the
runtime nodes (``helmbed.RUNTIME_NODES``, tainted for the chart's pods, each with a network
namespace: the chart's pods run there as real ``vbridge`` processes), the plain simulated nodes
for the workloads, the built kube-scheduler for the chart's own pods and a ``LogKeeper`` of their
output; the ``helmbed.Bed`` the tests use, its values file written from ``helmbed.values()``,
with a serving certificate of ``CERT_SECONDS``.
Skips without root or without a built helm. ``native=True``: the control plane serves the
Workload API (``native_gangs``, kube-scheduler with its gate) and the values choose
``backend: native``; ``native_bed`` is that bed as a module-scoped fixture.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections.abc import Iterator

import pytest
import yaml

from tests.support import apiserver, helmbed, helminstall, netns, runtimesim, upstream
from vbridge.localcluster import binaries, kubescheduler
from vbridge.nodesim import nodes

__all__ = ["CERT_SECONDS", "native_bed", "running"]

# The serving certificate's validity on this bed (the chart's controllers.extraArgs): renewed a
# third before expiry, so every 80 s, several times while the tests admit.
CERT_SECONDS = 120


@contextlib.contextmanager
def running(bins: binaries.Binaries, work: pathlib.Path, *, native: bool = False) -> Iterator[helmbed.Bed]:
    if os.geteuid() != 0:
        pytest.skip("network and mount namespaces need root")
    if "helm" not in bins.extras:
        pytest.skip("helm not built (tools/build-binaries.sh)")
    lc = helminstall.BareCluster(work / "cluster", bins=bins, audited=(helmbed.NS,), native_gangs=native)
    with contextlib.ExitStack() as stack:
        stack.enter_context(apiserver.started(lc))
        upstream.install(lc, "training-operator", "mpi-operator", "spark-operator", "jobset")
        nets = []
        for i in range(len(helmbed.RUNTIME_NODES)):
            nets.append(netns.NodeNetwork.create(str(i)))
            stack.callback(nets[-1].delete)
        specs = [nodes.NodeSpec(n, cpu="4", memory="16Gi", taints=(helmbed.TAINT,)) for n in helmbed.RUNTIME_NODES]
        specs += [nodes.NodeSpec(n, cpu="8", memory="32Gi") for n in helmbed.PLAIN_NODES]
        sim = runtimesim.RuntimeSimThread(
            lc.kubeconfig,
            specs,
            workdir=work / "kubelet",
            nets={n: net.node_net() for n, net in zip(helmbed.RUNTIME_NODES, nets, strict=True)},
        ).start()
        stack.callback(sim.stop)
        stack.callback(kubescheduler.start(lc, bins).stop)
        keeper = helminstall.LogKeeper(work / "kubelet", work / "pod-logs").start()
        stack.callback(keeper.stop)
        values = work / "values.yaml"
        chosen = helmbed.values()
        if native:
            chosen["backend"] = "native"
        chosen["controllers"]["extraArgs"] = [f"--cert-validity={CERT_SECONDS}", "--cert-check-period=5"]
        values.write_text(yaml.safe_dump(chosen))
        api = stack.enter_context(apiserver.client_of(lc))
        yield helmbed.Bed(lc, bins, api, sim, helminstall.Helm(bins.path("helm"), lc), keeper, values)


@pytest.fixture(scope="module")
def native_bed(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[helmbed.Bed]:
    with running(bins, tmp_path_factory.mktemp("helm-native"), native=True) as out:
        yield out
