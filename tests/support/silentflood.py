"""Raw TCP connections that never send a byte, kept open against a server: the lock-out probe.

``SilentFlood(port, count)`` opens ``count`` connections to ``127.0.0.1:port`` and, in a thread
of its own, opens a new one for each the server closes (EOF or reset), so ``count`` are held for
as long as the flood lasts, whatever the server's timeouts. ``open`` is how many are connected
now, ``closed`` how many the server has closed so far.
"""

from __future__ import annotations

import selectors
import socket
import threading
from types import TracebackType


class SilentFlood:
    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.open = 0
        self.closed = 0
        self._selector = selectors.DefaultSelector()  # epoll: any descriptor number
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="silent-flood", daemon=True)

    def __enter__(self) -> SilentFlood:
        for _ in range(self.count):
            self._connect()
        assert self.open == self.count, f"only {self.open} of {self.count} connections were made"
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(10)
        for key in list(self._selector.get_map().values()):
            sock: socket.socket = key.fileobj  # type: ignore[assignment]
            self._selector.unregister(sock)
            sock.close()
        self._selector.close()

    def _connect(self) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        except OSError:
            return  # tried again on the next turn
        self._selector.register(sock, selectors.EVENT_READ)
        self.open += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._selector.select(0.1):  # a silent client reads only EOF or a reset
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                self._selector.unregister(sock)
                sock.close()
                self.open -= 1
                self.closed += 1
            while self.open < self.count and not self._stop.is_set():
                self._connect()
