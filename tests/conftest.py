"""Shared fixtures: one real control plane (etcd, kube-apiserver, kube-controller-manager) per session.

The Go-built binaries must exist (``tools/build-binaries.sh``; ``.ci/run`` builds them first).
Without them integration tests are skipped with the reason, except under ``CI=true``, where a
missing binary is a failure.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterator

import pytest

# The shared helpers assert as test modules do, with pytest's explanations: registered before
# any of them is imported.
pytest.register_assert_rewrite("tests.support")

from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402

from bridge import errors  # noqa: E402
from tests.support import bridgethread, planes, simthread  # noqa: E402
from vbridge.localcluster import binaries, cluster  # noqa: E402
from vbridge.nodesim import nodes  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def bins() -> binaries.Binaries:
    try:
        return binaries.ensure(build=False, extras=True)
    except errors.BinaryMissingError as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"control-plane binaries not built ({exc}); run tools/build-binaries.sh")


@pytest.fixture(scope="session")
def control_plane(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.LocalCluster]:
    lc = cluster.LocalCluster(tmp_path_factory.mktemp("cluster"), bins=bins)
    lc.start()
    try:
        yield lc
    finally:
        lc.stop()


@pytest.fixture(scope="session")
def sim_nodes(control_plane: cluster.LocalCluster) -> Iterator[simthread.SimThread]:
    specs = nodes.pool(4, cpu="8", memory="32Gi", gpus=2)
    thread = simthread.SimThread(control_plane.kubeconfig, specs).start()
    try:
        yield thread
    finally:
        thread.stop()


@pytest.fixture(scope="session")
def bridge(control_plane: cluster.LocalCluster) -> Iterator[bridgethread.BridgeThread]:
    """Our webhook server and reconcilers, registered through a MutatingWebhookConfiguration."""
    thread = bridgethread.BridgeThread(control_plane).start()
    try:
        yield thread
    finally:
        thread.stop()


@pytest.fixture(scope="session")
def api_client(control_plane: cluster.LocalCluster) -> Iterator[k8s.ApiClient]:
    api = k8s_config.new_client_from_config(config_file=str(control_plane.kubeconfig))
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def namespace(api_client: k8s.ApiClient, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace per test, named after it; deleted afterwards (the namespace controller runs)."""
    with planes.fresh_namespace(api_client, request) as name:
        yield name


@pytest.fixture(scope="session", autouse=True)
def _collect_background_loops_quietly() -> Iterator[None]:
    """At session end, collect what the background event loops of the test harness left behind.

    A transport whose close callback was still queued when its thread's loop closed is reported
    by pytest as an unraisable ResourceWarning at interpreter exit, where it can no longer be
    attributed to any test (seen rarely, under load, from a loopback socket of a harness thread).
    Leaks during a test still fail that test: only this final sweep is quiet.
    """
    import gc
    import warnings

    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
