"""Run the async node simulator on its own event loop in a background thread (for sync tests)."""

from __future__ import annotations

import asyncio
import pathlib
import threading
from collections.abc import Sequence

from bridge.k8s import client, kubeconfigs
from bridge.nodesim import nodes, simulator


class SimThread:
    def __init__(self, kubeconfig: pathlib.Path, specs: Sequence[nodes.NodeSpec], **kwargs: object) -> None:
        self.kubeconfig = kubeconfig
        self.specs = list(specs)
        self.kwargs = kwargs
        self.loop = asyncio.new_event_loop()
        self.sim: simulator.Simulator | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._main, name="nodesim", daemon=True)

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._serve())
        except asyncio.CancelledError:
            pass
        except BaseException as exc:
            self._error = exc
            self._ready.set()
        finally:
            self.loop.close()

    async def _serve(self) -> None:
        async with client.Client(kubeconfigs.load(self.kubeconfig), connections=32) as api:
            self.sim = simulator.Simulator(api, self.specs, **self.kwargs)  # type: ignore[arg-type]
            self._task = asyncio.current_task()
            await self.sim.register_nodes()
            self._ready.set()
            await self.sim.serve()

    def start(self, timeout: float = 60) -> SimThread:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("simulated nodes were not registered in time")
        if self._error:
            raise self._error
        return self

    def stop(self) -> None:
        if self._task is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(15)
