"""The node simulator with its runtime (pods of our image run for real), on a background loop."""

from __future__ import annotations

import asyncio
import pathlib
from collections.abc import Mapping, Sequence

from bridge.k8s import client, kubeconfigs
from tests.support import loopthread
from vbridge.nodesim import nodes, simulator
from vbridge.nodesim import runtime as node_runtime


class RuntimeSimThread(loopthread.LoopThread):
    def __init__(
        self,
        kubeconfig: pathlib.Path,
        specs: Sequence[nodes.NodeSpec],
        *,
        workdir: pathlib.Path,
        nets: Mapping[str, node_runtime.NodeNet],
        resync: float = 2.0,
        backoff: tuple[float, float] = (1.0, 4.0),
        default_run_seconds: float | None = None,
    ) -> None:
        self.sim: simulator.Simulator | None = None
        self.runtime: node_runtime.Runtime | None = None
        conn = kubeconfigs.load(kubeconfig)
        config = node_runtime.Config(workdir=workdir, nodes=dict(nets), resync=resync, backoff=backoff)

        async def main(ready: asyncio.Event) -> None:
            async with client.Client(conn, connections=16) as api:
                self.runtime = node_runtime.Runtime(api, conn.server, config)
                self.sim = simulator.Simulator(
                    api, list(specs), runtime=self.runtime, default_run_seconds=default_run_seconds
                )
                await self.sim.register_nodes()
                ready.set()
                await self.sim.serve()

        super().__init__(main, "nodesim-runtime")
