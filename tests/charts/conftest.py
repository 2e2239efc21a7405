"""Fixtures of the chart tests: helm, kubeconform, a test CA, and kubeconform schemas made from the
test bed's own apiserver (its OpenAPI v2 document) and our CRDs: nothing is downloaded."""

from __future__ import annotations

import json
import pathlib
import subprocess

import pytest

from bridge import crdgen
from tests.support import helmchart, kubeschemas
from vbridge.localcluster import binaries, cluster


def _extra(bins: binaries.Binaries, name: str) -> pathlib.Path:
    if name not in bins.extras:
        pytest.skip(f"{name} was not built (tools/build-binaries.sh builds it)")
    return bins.path(name)


@pytest.fixture(scope="session")
def helm(bins: binaries.Binaries) -> pathlib.Path:
    return _extra(bins, "helm")


@pytest.fixture(scope="session")
def kubeconform(bins: binaries.Binaries) -> pathlib.Path:
    return _extra(bins, "kubeconform")


@pytest.fixture(scope="session")
def ca_file(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return helmchart.make_ca(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="session")
def kubectl(bins: binaries.Binaries, control_plane: cluster.LocalCluster) -> list[str]:
    return [str(bins.path("kubectl")), f"--kubeconfig={control_plane.kubeconfig}"]


@pytest.fixture(scope="session")
def schema_dir(kubectl: list[str], tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    raw = subprocess.run([*kubectl, "get", "--raw", "/openapi/v2"], capture_output=True, check=True).stdout
    crds = [crdgen.manifest(info) for info in crdgen.ALL]
    folder = kubeschemas.write(
        tmp_path_factory.mktemp("schemas"), kubeschemas.from_openapi_v2(json.loads(raw)), kubeschemas.from_crds(crds)
    )
    assert (folder / "apps" / "v1" / "deployment.json").exists()
    assert (folder / "scheduling.volcano.sh" / "v1beta1" / "queue.json").exists()
    return folder
