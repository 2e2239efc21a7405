"""The upstream operators' CRDs and example manifests, from the pinned Go modules."""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any

import yaml

from bridge.k8s import client, kubeconfigs
from vbridge.localcluster import cluster, depcrds

ROOT = pathlib.Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "dep-crds"


def install(lc: cluster.LocalCluster, *sets: str) -> None:
    """Apply the CRDs of each named set (``depcrds.SETS``) to ``lc``."""
    docs: list[dict[str, Any]] = []
    for name in sets:
        for path in depcrds.ensure(name, CACHE):
            docs += [d for d in yaml.safe_load_all(path.read_text()) if d]

    async def go() -> None:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
            await cluster.apply_crds(api, docs)

    asyncio.run(go())


def example(crd_set: str, rel: str) -> dict[str, Any]:
    """An example manifest, unchanged but for its namespace, from the pinned module's ``examples/`` folder."""
    module, version, _ = depcrds.SETS[crd_set]
    body: dict[str, Any] = yaml.safe_load(
        pathlib.Path(depcrds.module_dir(module, version) / "examples" / rel).read_text()
    )
    body["metadata"].pop("namespace", None)
    return body
