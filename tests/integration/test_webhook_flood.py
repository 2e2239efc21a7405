"""A thousand raw connections that never send a byte, held against the webhook (``--client-ca``
on) from the apiserver's own address, while jobs are created through it: every create mutated.

The finding: 256 such sockets held the server's one connection cap, and the apiserver's calls
were refused (so ``Fail`` kinds were denied and ``Ignore`` kinds went through unmutated). The bed
is this module's own, so the apiserver first connects to the webhook during the flood: nothing
it opened before helps it. The server's pool of connections before their first request is
smaller than the flood (512), so each connection that comes pushes the oldest out, and the flood
opens it again at once; creates run for longer than the head timeout (5 s).
"""

from __future__ import annotations

import concurrent.futures
import copy
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bridge import defaults
from tests.support import clientauth, silentflood, upstream
from vbridge.localcluster import binaries, cluster

pytestmark = pytest.mark.integration
ROOT = pathlib.Path(__file__).resolve().parents[2]
GROUP_NAME = "scheduling.k8s.io/group-name"
SILENT = 1000
PENDING = 512  # the fresh pool, smaller than the flood: each connection that comes pushes the oldest out


@pytest.fixture(scope="module")
def bed(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[clientauth.ClientAuthCluster]:
    lc = clientauth.ClientAuthCluster(tmp_path_factory.mktemp("flood"), webhook_port=cluster.free_port(), bins=bins)
    lc.start()
    try:
        upstream.install(lc, "training-operator")
        # registered; the apiserver has not called it yet
        thread = clientauth.ClientAuthBridge(lc, max_pending=PENDING).start()
        try:
            yield lc
        finally:
            thread.stop()
    finally:
        lc.stop()


def _create(api: k8s.ApiClient, body: dict[str, Any], name: str) -> dict[str, Any]:
    job = copy.deepcopy(body)
    job["metadata"] = {"name": name}
    out: dict[str, Any] = k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        "kubeflow.org", "v1", "default", "tfjobs", job
    )
    return out


def test_a_thousand_silent_connections_do_not_keep_the_apiserver_out(bed: clientauth.ClientAuthCluster) -> None:
    body: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "tfjob-v1.yaml").read_text())
    api = k8s_config.new_client_from_config(config_file=str(bed.kubeconfig))
    created: list[dict[str, Any]] = []
    held: list[int] = []  # silent connections open as each create was sent
    try:
        with (
            silentflood.SilentFlood(bed.webhook_port, SILENT) as flood,
            concurrent.futures.ThreadPoolExecutor(4) as pool,  # concurrent calls: new apiserver connections
        ):
            started = time.monotonic()
            rounds = 0
            # Creates for longer than the head timeout (silent connections are closed at it and
            # opened again), and at least 40 of them.
            while time.monotonic() - started < defaults.HEADER_TIMEOUT_SECONDS + 1 or len(created) < 40:
                held.append(flood.open)
                names = [f"flood-{rounds}-{i}" for i in range(4)]
                created += pool.map(lambda n: _create(api, body, n), names)
                rounds += 1
            seconds, closed = time.monotonic() - started, flood.closed
    finally:
        api.close()
    print(
        f"\n{len(created)} creates in {seconds:.1f} s against {SILENT} silent connections (open as each was sent:"
        f" min {min(held)}, pool {PENDING}); the server closed {closed} of them"
    )
    unmutated = [
        (job["metadata"]["name"], role)
        for job in created
        for role, spec in job["spec"]["tfReplicaSpecs"].items()
        if spec["template"].get("metadata", {}).get("annotations", {}).get(GROUP_NAME) != job["metadata"]["name"]
    ]
    assert unmutated == []
    specs = [spec for job in created for spec in job["spec"]["tfReplicaSpecs"].values()]
    assert {spec["template"]["spec"]["schedulerName"] for spec in specs} == {defaults.SCHEDULER_NAME}
    assert min(held) > PENDING and closed > SILENT  # the flood overflowed the pool all along
