"""One upstream operator on its own control plane, with our bridge and a gang scheduler, for a test module."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.integration import test_spark_submit as common
from tests.support import bridgethread
from vbridge.localcluster import binaries, cluster, depcrds, operators

Env = tuple[k8s.ApiClient, operators.Operator, common.Gang]


def running(
    name: str, bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory, *, spark: pathlib.Path | None = None
) -> Iterator[Env]:
    """Yield (client, operator, gang scheduler) while operator ``name`` runs; stop all of it afterwards."""
    binary = common.operator_binary(name)
    lc = cluster.LocalCluster(tmp_path_factory.mktemp(name), bins=bins)
    lc.start()
    bridge = None
    try:
        bridge = bridgethread.BridgeThread(lc).start()
        with operators.Operator(name, lc, binary=binary, spark=spark) as op:
            api = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
            gang = common.Gang(lc, api)
            try:
                yield api, op, gang
            finally:
                gang.stop()
                api.close()
    finally:
        if bridge is not None:
            bridge.stop()
        lc.stop()


def upstream_example(crd_set: str, rel: str) -> dict[str, Any]:
    """An example manifest, unchanged, from the pinned operator module's ``examples/`` folder."""
    module, version, _ = depcrds.SETS[crd_set]
    body: dict[str, Any] = yaml.safe_load(
        pathlib.Path(depcrds.module_dir(module, version) / "examples" / rel).read_text()
    )
    body["metadata"].pop("namespace", None)
    return body
