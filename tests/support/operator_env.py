"""One upstream operator on its own control plane, with our bridge and a gang scheduler, for a test module.

Also where the operators and pyspark are found: a missing one skips the test, except under
``CI=true`` when CI builds the operators, where a missing operator is a failure.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bridge import errors
from tests.support import bridgethread, gangs
from vbridge.localcluster import binaries, cluster, operators

ROOT = pathlib.Path(__file__).resolve().parents[2]
Env = tuple[k8s.ApiClient, operators.Operator, gangs.Gang]


def ci_builds_operators() -> bool:
    """Whether CI builds the operators: only then is a missing binary a failure under CI=true."""
    scripts = [ROOT / ".ci" / "run", ROOT / "tools" / "dev"]
    return any("build-operators.sh" in p.read_text() for p in scripts if p.exists())


def operator_binary(name: str) -> pathlib.Path:
    try:
        return operators.find(name)
    except errors.BinaryMissingError as exc:
        if os.environ.get("CI") == "true" and ci_builds_operators():
            raise
        pytest.skip(f"{exc}")


def spark_home() -> pathlib.Path:
    home = operators.spark_home()
    if home is None:
        pytest.skip("pyspark is not installed (.venv/bin/pip install 'pyspark==3.5.*') and SPARK_HOME is unset")
    return home


def spark4_home() -> pathlib.Path:
    """pyspark ≥ 4.2 (VolcanoFeatureStep in the standard build), from ``VBRIDGE_SPARK4_HOME`` or .cache."""
    env = os.environ.get("VBRIDGE_SPARK4_HOME")
    candidates = [pathlib.Path(env)] if env else []
    candidates += sorted((ROOT / ".cache").glob("pyspark4-venv/lib/python3*/site-packages/pyspark"))
    for home in candidates:
        if (home / "bin" / "spark-submit").exists() and operators.spark_version(home) >= "4.2":
            return home
    pytest.skip(
        "no pyspark ≥ 4.2: python -m venv .cache/pyspark4-venv && "
        ".cache/pyspark4-venv/bin/pip install 'pyspark>=4.2,<5'"
    )


def running(
    name: str, bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory, *, spark: pathlib.Path | None = None
) -> Iterator[Env]:
    """Yield (client, operator, gang scheduler) while operator ``name`` runs; stop all of it afterwards."""
    binary = operator_binary(name)
    lc = cluster.LocalCluster(tmp_path_factory.mktemp(name), bins=bins)
    lc.start()
    bridge = None
    try:
        bridge = bridgethread.BridgeThread(lc).start()
        with operators.Operator(name, lc, binary=binary, spark=spark) as op:
            api = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
            made = gangs.Gang(lc, api)
            try:
                yield api, op, made
            finally:
                made.stop()
                api.close()
    finally:
        if bridge is not None:
            bridge.stop()
        lc.stop()
