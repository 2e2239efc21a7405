"""Run an async service on its own event loop in a background thread, for synchronous tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any


class LoopThread:
    """``LoopThread(main).start()`` runs ``main(ready)``; it must call ``ready.set()`` once serving."""

    def __init__(self, main: Callable[[asyncio.Event], Coroutine[Any, Any, None]], name: str) -> None:
        self._main = main
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._wrap())
        except asyncio.CancelledError:
            pass
        except BaseException as exc:
            self._error = exc
        finally:
            self._ready.set()
            self._drain()
            self.loop.close()

    def _drain(self) -> None:
        """Let closing transports (TLS close_notify) finish before the loop is closed."""
        pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
        for task in pending:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.run_until_complete(asyncio.sleep(0.2))
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())

    async def _wrap(self) -> None:
        self._task = asyncio.current_task()
        ready = asyncio.Event()
        watcher = asyncio.create_task(self._signal_when(ready))
        try:
            await self._main(ready)
        finally:
            watcher.cancel()

    async def _signal_when(self, ready: asyncio.Event) -> None:
        await ready.wait()
        self._ready.set()

    def start(self, timeout: float = 60) -> LoopThread:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"{self._thread.name} did not become ready in {timeout} s")
        if self._error:
            raise self._error
        return self

    def stop(self) -> None:
        if self._task is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(20)
