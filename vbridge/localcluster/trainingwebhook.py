"""What the training-operator's Deployment and kustomize manifests give it in a cluster.

Its cert rotator fills an existing Secret and injects the CA into an existing
ValidatingWebhookConfiguration, and the controllers wait for both. The configuration is the
module's own (manifests/base/webhook), pointed at a Service of type ExternalName ``localhost``
so the apiserver reaches the webhook server on loopback with TLS verified against the Service's
DNS name, exactly as in a cluster. On a cluster whose apiserver routes to Services through
their endpoints (``LocalCluster(endpoint_routing=True)``, where ExternalName is refused) the
Service has no selector and an Endpoints object of its own: the host's first global IPv4 address
(the webhook server listens on every address; loopback is not a valid endpoint). :func:`mount`
then acts as the kubelet's Secret volume.

training-operator v1.9.4 pkg/cert: the rotator polls a fixed folder (:data:`CERT_DIR`) for the
mounted Secret, while its webhook server reads $TMPDIR/k8s-webhook-server/serving-certs. The
operator gets a private TMPDIR and the certificate is written to both, so concurrent runs only
share the fixed folder's "is it mounted yet" check, never the certificate that is served.
"""

from __future__ import annotations

import base64
import pathlib
import shutil
import subprocess
from typing import Any

import yaml

from bridge import errors
from bridge.k8s import client, kubeconfigs, paths, writes
from vbridge.localcluster import cluster, depcrds

__all__ = ["CERT_DIR", "SECRET", "WEBHOOK_CONFIG", "cert_dirs", "clear", "host_address", "mount", "only", "setup"]

CERT_DIR = pathlib.Path("/tmp/k8s-webhook-server/serving-certs")
WEBHOOK_CONFIG = "validator.training-operator.kubeflow.org"
SECRET = "training-operator-webhook-cert"


def cert_dirs(workdir: pathlib.Path) -> tuple[pathlib.Path, ...]:
    """The webhook server's folder under the operator's TMPDIR, and the rotator's fixed one."""
    return (workdir / "tmp" / "k8s-webhook-server" / "serving-certs", CERT_DIR)


def setup(
    lc: cluster.LocalCluster, workdir: pathlib.Path, *, namespace: str, port: int, schemes: tuple[str, ...] = ()
) -> list[str]:
    """Secret, Service and webhook configuration for a webhook server on loopback ``port``;
    empty certificate folders. The webhook URLs, to probe until they are routed.

    ``schemes`` (``tfjob``, ``pytorchjob``, …: the operator's ``--enable-scheme`` values) keeps
    only their webhooks: the operator serves no other, so the others would deny every create."""
    module, version, _ = depcrds.SETS["training-operator"]
    manifests = depcrds.module_dir(module, version) / "manifests" / "base" / "webhook" / "manifests.yaml"
    config = next(d for d in yaml.safe_load_all(manifests.read_text()) if d)
    config["metadata"] = {"name": WEBHOOK_CONFIG}
    config = only(config, schemes)
    urls = []
    for hook in config["webhooks"]:
        ref = hook["clientConfig"]["service"]
        ref.update(name="training-operator", namespace=namespace, port=port)
        urls.append(f"https://127.0.0.1:{port}{ref['path']}")
    for folder in cert_dirs(workdir):
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("tls.*"):
            stale.unlink()

    service: dict[str, Any] = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "training-operator"}}
    objects: list[tuple[str, dict[str, Any]]] = [
        ("secrets", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET}}),
        ("services", service),
    ]
    if lc.endpoint_routing:
        service["spec"] = {"ports": [{"port": port}]}
        subset = {"addresses": [{"ip": host_address()}], "ports": [{"port": port}]}
        objects.append(("endpoints", {**service, "kind": "Endpoints", "subsets": [subset]}))
    else:
        service["spec"] = {"type": "ExternalName", "externalName": "localhost", "ports": [{"port": port}]}

    async def go() -> None:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
            await cluster.ensure_namespace(api, namespace, *objects)
            base = paths.resource("admissionregistration.k8s.io/v1", "validatingwebhookconfigurations")
            await writes.delete(api, f"{base}/{WEBHOOK_CONFIG}")
            await api.request("POST", base, body=config)

    cluster.run_sync(go())
    return urls


def host_address() -> str:
    """The host's first global-scope IPv4 address (``ip -4 addr``)."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        words = line.split()
        if "inet" in words:
            return words[words.index("inet") + 1].split("/", 1)[0]
    raise errors.StartupError("training-operator webhook: the host has no global IPv4 address for its endpoint")


def only(config: dict[str, Any], schemes: tuple[str, ...]) -> dict[str, Any]:
    """The webhook configuration with only the webhooks of ``schemes`` (all when empty)."""
    if not schemes:
        return config
    plurals = {f"{s.lower()}s" for s in schemes}
    hooks = [h for h in config["webhooks"] if {r for rule in h["rules"] for r in rule["resources"]} <= plurals]
    return {**config, "webhooks": hooks}


def mount(lc: cluster.LocalCluster, workdir: pathlib.Path, *, namespace: str) -> bool:
    """Act as the kubelet's Secret volume: copy the rotator's certificate into both folders.
    False while the rotator has not filled the Secret yet."""

    async def go() -> dict[str, Any]:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
            return await api.request("GET", paths.resource("v1", "secrets", namespace=namespace, name=SECRET))

    data = cluster.run_sync(go()).get("data") or {}
    if not data.get("tls.crt") or not data.get("tls.key"):
        return False
    for key in ("tls.key", "tls.crt"):  # the rotator looks for tls.crt: write it last
        for folder in cert_dirs(workdir):
            (folder / key).write_bytes(base64.b64decode(data[key]))
    return True


def clear(workdir: pathlib.Path) -> None:
    """Remove both certificate folders."""
    for folder in cert_dirs(workdir):
        shutil.rmtree(folder, ignore_errors=True)
