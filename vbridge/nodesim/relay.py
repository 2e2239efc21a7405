"""A TCP relay from inside a pod network namespace to the apiserver on the host's loopback.

The apiserver listens on 127.0.0.1 of the host; a process in a network namespace has its own
loopback. :func:`listen_in` opens a listening socket *inside* the namespace (a short-lived
thread ``setns``-es into it; a socket stays in the namespace it was made in) and :func:`serve`
pipes each connection to the apiserver. So the pod sees the apiserver at 127.0.0.1 with the
same port, and its certificate (issued for 127.0.0.1) verifies.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import socket
import threading

__all__ = ["listen_in", "serve"]

_CLONE_NEWNET = 0x40000000


def listen_in(netns: str, host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` inside the network namespace at path ``netns``."""
    result: dict[str, socket.socket | BaseException] = {}

    def enter_and_listen() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(netns, os.O_RDONLY)
            try:
                if libc.setns(fd, _CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns({netns})")
            finally:
                os.close(fd)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(128)
            sock.setblocking(False)
            result["sock"] = sock
        except BaseException as exc:
            result["error"] = exc

    thread = threading.Thread(target=enter_and_listen, name="netns-listen")  # this thread alone changes netns
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    sock = result["sock"]
    assert isinstance(sock, socket.socket)
    return sock


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def serve(sock: socket.socket, target_host: str, target_port: int) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        for w in (writer, up_writer):
            with contextlib.suppress(Exception):
                await w.wait_closed()

    return await asyncio.start_server(handle, sock=sock)
