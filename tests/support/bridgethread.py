"""The bridge (admission server + reconcilers) on a background loop, registered with the apiserver."""

from __future__ import annotations

import asyncio
import pathlib

from bridge.k8s import client, kubeconfigs
from tests.support import loopthread
from vbridge import runtime
from vbridge.localcluster import certs as cluster_certs
from vbridge.localcluster import cluster
from webhooks import server


class BridgeThread(loopthread.LoopThread):
    def __init__(
        self,
        lc: cluster.LocalCluster,
        *,
        scheduler_name: str = "volcano",
        kubeconfig: pathlib.Path | None = None,
        backend: str = "volcano",
    ) -> None:
        """``kubeconfig``: how the bridge reaches the apiserver (default ``lc``'s; e.g. through a proxy);
        ``backend``: ``--backend`` (volcano, native or auto)."""
        port = cluster.free_port()
        pki = cluster_certs.KeyPair(cert=lc.workdir / "pki" / "ca.crt", key=lc.workdir / "pki" / "ca.key")
        serving = cluster_certs.issue_from(
            pki, lc.workdir / "webhook", "webhook", common_name="volcano-bridge", hosts=("127.0.0.1",)
        )
        self.url = f"https://127.0.0.1:{port}"
        self.kubeconfig = kubeconfig or lc.kubeconfig
        settings = server.Settings(port=port, certfile=serving.cert, keyfile=serving.key, scheduler_name=scheduler_name)
        self.bridge: runtime.Bridge | None = None

        async def main(ready: asyncio.Event) -> None:
            async with client.Client(kubeconfigs.load(self.kubeconfig), connections=16) as api:
                self.bridge = runtime.Bridge(api, settings, backend=backend)
                task = asyncio.create_task(self.bridge.run())
                started = asyncio.create_task(self.bridge.started.wait())
                await asyncio.wait([task, started], return_when=asyncio.FIRST_COMPLETED)
                if task.done():
                    await task
                await runtime.register(
                    api,
                    url=self.url,
                    ca_bundle=pki.cert.read_bytes(),
                    scheduler_name=scheduler_name,
                    backend=backend,
                )
                ready.set()
                try:
                    await task
                finally:
                    await asyncio.shield(runtime.unregister(api))

        super().__init__(main, "bridge")
