"""``serve --client-ca``: the webhook admits only TLS clients with a certificate from that CA.

On a test bed whose apiserver presents its admission client certificate (an
AdmissionConfiguration pointing at a kubeconfig for our webhook's host:port), a Volcano Job
(a ``Fail`` webhook: no answer, no Job) is created and comes back mutated; a client without a
certificate, or with one from another CA, does not get past the handshake.
"""

from __future__ import annotations

import pathlib
import socket
import ssl
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.support import clientauth
from vbridge.localcluster import binaries, cluster
from vbridge.localcluster import certs as cluster_certs

pytestmark = pytest.mark.integration
ROOT = pathlib.Path(__file__).resolve().parents[2]
CURL = ("curl", "-sS", "--max-time", "5")


@pytest.fixture(scope="module")
def bed(
    bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[clientauth.ClientAuthCluster, clientauth.ClientAuthBridge]]:
    lc = clientauth.ClientAuthCluster(
        tmp_path_factory.mktemp("client-auth"), webhook_port=cluster.free_port(), bins=bins
    )
    lc.start()
    try:
        thread = clientauth.ClientAuthBridge(lc).start()
        try:
            yield lc, thread
        finally:
            thread.stop()
    finally:
        lc.stop()


def test_the_apiserver_with_its_admission_client_certificate_is_admitted(
    bed: tuple[clientauth.ClientAuthCluster, clientauth.ClientAuthBridge],
) -> None:
    lc, _ = bed
    body: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "volcano-job-mpi.yaml").read_text())
    body["metadata"].pop("namespace", None)
    for task in body["spec"]["tasks"]:
        task.pop("minAvailable", None)  # our webhook defaults it to the task's replicas
    api = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
    try:
        out = k8s.CustomObjectsApi(api).create_namespaced_custom_object(
            "batch.volcano.sh", "v1alpha1", "default", "jobs", body
        )
    finally:
        api.close()
    tasks = out["spec"]["tasks"]
    assert [t["minAvailable"] for t in tasks] == [t["replicas"] for t in tasks]
    assert out["spec"]["schedulerName"] == "volcano" and out["spec"]["queue"] == "default"


def test_a_client_without_a_certificate_is_refused_at_the_handshake(
    bed: tuple[clientauth.ClientAuthCluster, clientauth.ClientAuthBridge],
) -> None:
    lc, thread = bed
    ctx = ssl.create_default_context(cafile=str(thread.serving_ca))
    with (
        pytest.raises((ssl.SSLError, ConnectionError)),
        socket.create_connection(("127.0.0.1", lc.webhook_port), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert not tls.recv(4096), "a client without a certificate got an answer"
        raise ConnectionError("closed without an answer")
    curl = subprocess.run(
        [*CURL, "--cacert", str(thread.serving_ca), f"{thread.url}/healthz"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert curl.returncode != 0 and "ok" not in curl.stdout, curl


def test_a_certificate_from_another_ca_is_refused_and_the_right_one_served(
    bed: tuple[clientauth.ClientAuthCluster, clientauth.ClientAuthBridge], tmp_path: pathlib.Path
) -> None:
    lc, thread = bed
    other = cluster_certs.make_pki(tmp_path / "other").ca
    stranger = cluster_certs.issue_from(other, tmp_path, "stranger", common_name="kube-apiserver-admission", hosts=())

    def curl(pair: cluster_certs.KeyPair) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                *CURL,
                "--cacert",
                str(thread.serving_ca),
                "--cert",
                str(pair.cert),
                "--key",
                str(pair.key),
                thread.url + "/healthz",
            ],
            capture_output=True,
            text=True,
            check=False,
        )

    refused = curl(stranger)
    assert refused.returncode != 0 and "ok" not in refused.stdout, refused
    admitted = curl(lc.client_cert)
    assert admitted.returncode == 0 and '"status":"ok"' in admitted.stdout, admitted
