"""The node simulator on a background loop (for synchronous tests)."""

from __future__ import annotations

import asyncio
import pathlib
from collections.abc import Sequence

from bridge.k8s import client, kubeconfigs
from tests.support import loopthread
from vbridge.nodesim import nodes, simulator


class SimThread(loopthread.LoopThread):
    def __init__(self, kubeconfig: pathlib.Path, specs: Sequence[nodes.NodeSpec], **kwargs: object) -> None:
        self.sim: simulator.Simulator | None = None

        async def main(ready: asyncio.Event) -> None:
            async with client.Client(kubeconfigs.load(kubeconfig), connections=32) as api:
                self.sim = simulator.Simulator(api, list(specs), **kwargs)  # type: ignore[arg-type]
                await self.sim.register_nodes()
                ready.set()
                await self.sim.serve()

        super().__init__(main, "nodesim")
