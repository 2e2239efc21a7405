"""Commands end when asked: SIGINT or SIGTERM ends every command within 1 s, at any point of its life.

:func:`install` is the first thing ``vbridge.cli.main`` does, before it reads the command line
(so before a command's imports). The handler it installs for both signals:

- records the signal: :func:`exit_code` is then the shell's 128 + N (130 for SIGINT, 143 for
  SIGTERM), which ``cli.main`` returns however the command unwinds;
- while :func:`run` runs a coroutine (every asyncio command's main goes through it, in place of
  ``asyncio.run``), cancels that task from the loop (``call_soon_threadsafe``, which also wakes
  the loop out of its select): the command unwinds through its ``finally`` blocks, and
  :func:`run` raises KeyboardInterrupt. At any other moment (imports, reading a kubeconfig, a
  synchronous command such as ``simulate`` or ``up``'s start) there is nothing to unwind that
  the end of the process does not undo: it ends the process at once, as the watchdog does (no
  KeyboardInterrupt raised wherever the main thread is: a C extension's callback, an import,
  turns it into another error);
- the watchdog, a daemon thread :func:`install` started, blocked on a pipe that is the
  process's ``signal.set_wakeup_fd``, wakes as the signal arrives (written by the C-level
  handler, even while the main thread is in a long call and Python's handler has not run).
  ``defaults.INTERRUPT_GRACE_SECONDS`` after the first signal, or at once on a second one, it
  kills every child process group (SIGKILL), runs the :func:`at_hard_exit` callbacks, flushes
  stdout and stderr (bounded: a write blocked on a full pipe cannot hold it) and ends the
  process with ``os._exit(128 + N)``. A command that unwinds in time never meets it, and ends
  as ``cli.main`` returns, with ``os._exit`` too (no interpreter teardown to wait for).

:func:`terminate_children` (``up``): when the process ends after a signal, what is left of its
children gets SIGKILL, however it ends (the watchdog does so always). :func:`at_hard_exit`:
what to undo when the process is ended outright (``up`` removes its temporary folder).

Why a watchdog and not only a handler: a cancellation can be lost (Python 3.11's
``asyncio.wait_for`` returns the result of an awaitable that completed in the loop iteration of
the cancel, and the task runs on), a teardown can wait on a thread or a connection
(``asyncio.run`` joins the default executor, the interpreter its non-daemon threads at exit),
and a blocking call can outlast any budget. ``SIGTERM``'s default action ends the process but
not its children and flushes nothing.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from bridge import defaults

if TYPE_CHECKING:  # imported by run, not by every command (cli installs the handler first)
    import asyncio

__all__ = [
    "SIGNALS",
    "at_hard_exit",
    "children",
    "exit_code",
    "install",
    "received",
    "run",
    "terminate_children",
]

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM)
_STOP = b"\0"  # written by the uninstall: the watchdog thread ends
_HANDLED = b"\xff"  # written by Python's handler, beside the C-level handler's signal number


class _State:
    def __init__(self) -> None:
        self.signum = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.uninstall: Callable[[], None] = lambda: None
        self.wake = -1  # the watchdog's pipe
        self.terminate_children = False
        self.hooks: list[Callable[[], object]] = []


_state = _State()


def received() -> int:
    """The first signal received (0: none)."""
    return _state.signum


def exit_code() -> int:
    """128 + the signal received (0: none), the status a shell reports for it."""
    return 128 + _state.signum if _state.signum else 0


def terminate_children() -> None:
    """After a signal, every child process group gets SIGKILL as the command returns too."""
    _state.terminate_children = True


def at_hard_exit(callback: Callable[[], object]) -> None:
    """Run ``callback`` (in the watchdog's thread) if the command has to be ended outright."""
    _state.hooks.append(callback)


def install(grace: float = defaults.INTERRUPT_GRACE_SECONDS) -> Callable[[], None]:
    """The handler and the watchdog; returns what undoes them. Once a signal has come, it ends
    the process instead, with 128 + N (the children's groups killed with
    :func:`terminate_children`, output flushed): no interpreter teardown to wait for. Off the
    main thread (where Python cannot handle signals) nothing is done; installed already (``python
    -m vbridge.cli``), the same undo is returned."""
    global _state
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    if signal.getsignal(signal.SIGINT) is _handle:
        return _state.uninstall
    _state = _State()
    read, write = os.pipe()
    os.set_blocking(write, False)
    _state.wake = write
    previous = {sig: signal.signal(sig, _handle) for sig in SIGNALS}
    # The C-level handler writes the signal's number here as it arrives, even while the main
    # thread is in a long call and Python's handler has not run yet: the watchdog counts from it
    # (started after the handler: a signal while it starts is in the pipe for it).
    wakeup = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read, grace), name="vbridge-interrupts", daemon=True).start()

    def uninstall() -> None:
        if _state.signum:
            _end(exit_code())
        signal.set_wakeup_fd(wakeup)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        with contextlib.suppress(OSError):
            os.write(write, _STOP)
        _state.wake = -1
        os.close(write)

    _state.uninstall = uninstall
    return uninstall


def _handle(signum: int, frame: object) -> None:
    first = not _state.signum
    if first:
        _state.signum = signum
    with contextlib.suppress(OSError):
        os.write(_state.wake, _HANDLED)
    if not first:
        return  # the watchdog ends the process now
    loop, task = _state.loop, _state.task
    if loop is None:
        _hard_exit(signum)  # nothing to unwind: no exception raised where it cannot be handled
    if task is not None and not task.done():
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(task.cancel)


def run(main: Coroutine[Any, Any, T], *, loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None) -> T:
    """``asyncio.run(main)`` (on ``loop_factory()``'s loop) whose task a signal cancels, then
    raising KeyboardInterrupt; the teardown waits at most the grace for the other tasks and
    never joins the default executor's threads."""
    import asyncio

    try:
        if _state.signum:
            raise KeyboardInterrupt
        with _masked():  # a signal meanwhile is handled once the loop and the task are known
            loop = (loop_factory or asyncio.new_event_loop)()
            task = loop.create_task(main)
            _state.loop, _state.task = loop, task
    except BaseException:
        main.close()
        raise
    try:
        asyncio.set_event_loop(loop)
        result = loop.run_until_complete(task)
    except asyncio.CancelledError:
        if not _state.signum:
            raise
    finally:
        try:
            _close(loop)
        finally:
            _state.loop = _state.task = None
    if _state.signum:  # cancelled by it, or it came during the teardown
        raise KeyboardInterrupt
    return result


@contextlib.contextmanager
def _masked() -> Iterator[None]:
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    import asyncio

    try:
        left = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in left:
            t.cancel()
        if left:
            loop.run_until_complete(asyncio.wait(left, timeout=defaults.INTERRUPT_GRACE_SECONDS))
        for t in left:
            if t.done() and not t.cancelled() and t.exception() is not None:
                loop.call_exception_handler({"message": "unhandled exception during shutdown", "task": t})
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        asyncio.set_event_loop(None)
        loop.close()  # its executor is shut down without waiting for its threads


def _watch(read: int, grace: float) -> None:
    # Each signal is a byte from the C-level handler (while the wakeup fd is ours: a uvloop loop
    # takes it as it runs) and a _HANDLED from Python's: the first byte starts the grace, a second
    # signal (two of either kind) ends it.
    seen: dict[int, int] = {}
    while not seen:
        chunk = os.read(read, 16)
        for byte in chunk or _STOP:
            if byte == _STOP[0]:
                os.close(read)
                return
            if byte in SIGNALS or byte == _HANDLED[0]:
                seen[byte] = seen.get(byte, 0) + 1
    # From here this thread must get the GIL back at once after each of its system calls (it
    # reads /proc for every process to find the children): with the default 5 ms switch
    # interval, a main thread busy in pure Python (parsing the CRDs' YAML) made a few hundred of
    # those reads take over a second.
    sys.setswitchinterval(1e-4)
    deadline = time.monotonic() + grace
    while max(seen.values()) < 2 and (left := deadline - time.monotonic()) > 0:
        if select.select([read], [], [], left)[0]:
            if not (chunk := os.read(read, 16)):
                break
            for byte in chunk:
                seen[byte] = seen.get(byte, 0) + 1
    _hard_exit(_state.signum or next(b for b in seen if b in SIGNALS))


def _hard_exit(signum: int) -> NoReturn:
    """End the process now: every child process group killed, the hooks run, output flushed."""
    children(signal.SIGKILL)
    for hook in _state.hooks:
        with contextlib.suppress(Exception):
            hook()
    _end(128 + signum)


def _end(code: int) -> NoReturn:
    if _state.terminate_children:
        children(signal.SIGKILL)
    flush = threading.Thread(target=_flush, daemon=True)  # bounded: a write may be blocked on a full pipe
    flush.start()
    flush.join(0.1)
    os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def children(sig: int) -> list[int]:
    """Send ``sig`` to each child process: its whole group when it leads one (the control plane's
    processes run in sessions of their own), else the child alone; returns their pids."""
    me, found = os.getpid(), []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        pid, ppid, pgrp = int(entry.name), int(fields[1]), int(fields[2])
        if ppid != me:
            continue
        found.append(pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if pgrp == pid:
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)
    return found
