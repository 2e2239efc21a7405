"""A test bed whose apiserver authenticates to webhooks with a client certificate, and a bridge
that requires it (``serve --client-ca``).

The apiserver's ``--admission-control-config-file`` names an AdmissionConfiguration whose
MutatingAdmissionWebhook plugin reads a kubeconfig: its user named after the webhook's
``host:port`` carries the client certificate the apiserver presents when it calls that URL.
:class:`ClientAuthCluster` adds the flag to the apiserver's argv as it is started, so
``LocalCluster`` itself is unchanged.
"""

from __future__ import annotations

import asyncio
import pathlib

import yaml

from bridge import defaults
from bridge.k8s import client, kubeconfigs
from tests.support import loopthread
from vbridge import runtime
from vbridge.localcluster import certs as cluster_certs
from vbridge.localcluster import cluster, processes
from webhooks import server


class ClientAuthCluster(cluster.LocalCluster):
    def __init__(self, workdir: pathlib.Path, *, webhook_port: int, **kwargs: object) -> None:
        super().__init__(workdir, **kwargs)  # type: ignore[arg-type]
        self.webhook_port = webhook_port
        folder = workdir / "admission"
        self.client_ca = cluster_certs.make_pki(folder / "pki").ca  # a CA of its own, for webhook clients only
        self.client_cert = cluster_certs.issue_from(
            self.client_ca, folder, "apiserver-admission", common_name="kube-apiserver-admission", hosts=()
        )
        webhook_kubeconfig = folder / "webhook-clients.kubeconfig"
        webhook_kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "users": [
                        {
                            "name": f"127.0.0.1:{webhook_port}",
                            "user": {
                                "client-certificate": str(self.client_cert.cert),
                                "client-key": str(self.client_cert.key),
                            },
                        }
                    ],
                }
            )
        )
        self.admission_config = folder / "admission.yaml"
        self.admission_config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "apiserver.config.k8s.io/v1",
                    "kind": "AdmissionConfiguration",
                    "plugins": [
                        {
                            "name": "MutatingAdmissionWebhook",
                            "configuration": {
                                "apiVersion": "apiserver.config.k8s.io/v1",
                                "kind": "WebhookAdmissionConfiguration",
                                "kubeConfigFile": str(webhook_kubeconfig),
                            },
                        }
                    ],
                }
            )
        )

    def _run(self, proc: processes.Process) -> None:
        if proc.name == "kube-apiserver":
            proc.argv.append(f"--admission-control-config-file={self.admission_config}")
        super()._run(proc)


class ClientAuthBridge(loopthread.LoopThread):
    """Our server with ``client_ca`` (no reconcilers), registered with the apiserver by URL;
    ``max_pending``: its pool of connections before their first request."""

    def __init__(self, lc: ClientAuthCluster, *, max_pending: int = defaults.MAX_PENDING_CONNECTIONS) -> None:
        pki = cluster_certs.KeyPair(cert=lc.workdir / "pki" / "ca.crt", key=lc.workdir / "pki" / "ca.key")
        serving = cluster_certs.issue_from(
            pki, lc.workdir / "webhook", "webhook", common_name="volcano-bridge", hosts=("127.0.0.1",)
        )
        self.url = f"https://127.0.0.1:{lc.webhook_port}"
        self.serving_ca = pki.cert
        settings = server.Settings(
            port=lc.webhook_port,
            certfile=serving.cert,
            keyfile=serving.key,
            client_ca=lc.client_ca.cert,
            max_pending=max_pending,
        )

        async def main(ready: asyncio.Event) -> None:
            async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
                bridge = runtime.Bridge(api, settings, reconcile=False)
                task = asyncio.create_task(bridge.run())
                started = asyncio.create_task(bridge.started.wait())
                await asyncio.wait([task, started], return_when=asyncio.FIRST_COMPLETED)
                if task.done():
                    await task
                await runtime.register(api, url=self.url, ca_bundle=pki.cert.read_bytes())
                ready.set()
                try:
                    await task
                finally:
                    await asyncio.shield(runtime.unregister(api))

        super().__init__(main, "client-auth-bridge")
