"""Commands end when asked (issue 31, item 6): :mod:`vbridge.commands.interrupts`.

Each case runs in a process of its own (a signal, the watchdog and ``os._exit`` are per process):
a coroutine that swallows its cancel, a thread that outlives the loop, a blocking main thread, a
child in a session of its own; each ends within 1 s of the signal with 128 + N. Then ``vbridge
simulate`` at random moments (``tests.support.interrupting``). The cause of the hang seen in a
full run of ``vbridge list -w`` (Python 3.11's ``wait_for`` loses a cancel that comes as its
awaitable completes) is shown, and that the watch loop no longer uses it.
"""

from __future__ import annotations

import asyncio
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import yaml

from tests.support import interrupting
from vbridge.commands import output

PRELUDE = """\
import asyncio, os, subprocess, sys, threading, time
from vbridge.commands import interrupts
uninstall = interrupts.install()
try:
{body}
except KeyboardInterrupt:
    pass
uninstall()
sys.exit(interrupts.exit_code() or 3)
"""


def _interrupted(body: str, signum: int, tmp_path: pathlib.Path) -> tuple[int, float, str]:
    """(status, seconds from the signal to the end, stdout) of ``body``, signalled once it said
    "ready" on stderr."""
    script = PRELUDE.format(body=textwrap.indent(textwrap.dedent(body), "    "))
    argv = [sys.executable, "-c", script]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stderr.readline() == "ready\n"
        sent = time.monotonic()
        proc.send_signal(signum)
        code = proc.wait(10)
        return code, time.monotonic() - sent, proc.stdout.read()


def test_a_task_that_swallows_its_cancel_is_ended_after_the_grace_with_its_output_flushed(
    tmp_path: pathlib.Path,
) -> None:
    body = """
    async def stubborn():
        print("ready", file=sys.stderr, flush=True)
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                print("swallowed")  # block-buffered on a pipe: only the watchdog's flush shows it
    interrupts.run(stubborn())
    """
    code, took, out = _interrupted(body, signal.SIGINT, tmp_path)
    assert code == 130 and took <= interrupting.DEADLINE
    assert out == "swallowed\n"


def test_a_uvloop_loop_that_takes_the_wakeup_fd_still_has_its_watchdog(tmp_path: pathlib.Path) -> None:
    body = """
    import uvloop
    async def stubborn():
        print("ready", file=sys.stderr, flush=True)
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                pass
    interrupts.run(stubborn(), loop_factory=uvloop.new_event_loop)
    """
    code, took, _ = _interrupted(body, signal.SIGTERM, tmp_path)
    assert code == 143 and took <= interrupting.DEADLINE


def test_a_thread_the_interpreter_would_join_at_exit_does_not_hold_the_end(tmp_path: pathlib.Path) -> None:
    body = """
    async def main():
        print("ready", file=sys.stderr, flush=True)
        await asyncio.to_thread(time.sleep, 60)  # asyncio.run would join it, and so does the exit
    interrupts.run(main())
    """
    code, took, _ = _interrupted(body, signal.SIGTERM, tmp_path)
    assert code == 143 and took <= interrupting.DEADLINE


def test_a_synchronous_step_is_ended_at_once_with_its_output_flushed(tmp_path: pathlib.Path) -> None:
    body = """
    print("written")  # block-buffered on a pipe
    print("ready", file=sys.stderr, flush=True)
    time.sleep(60)
    """
    code, took, out = _interrupted(body, signal.SIGTERM, tmp_path)
    assert code == 143 and took <= 0.5  # no grace: nothing is unwinding
    assert out == "written\n"


def test_children_in_sessions_of_their_own_are_killed_with_their_groups(tmp_path: pathlib.Path) -> None:
    # The child and its own child ignore SIGTERM, and the command is stuck: only the watchdog's
    # SIGKILL to the child's group ends them.
    body = """
    script = "trap '' TERM; sleep 60 & echo $! > grandchild; wait"
    child = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    while not os.path.exists("grandchild") or not open("grandchild").read().strip():
        time.sleep(0.01)
    interrupts.terminate_children()
    print("ready", file=sys.stderr, flush=True)
    while True:
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    """
    code, took, _ = _interrupted(body, signal.SIGINT, tmp_path)
    assert code == 130 and took <= interrupting.DEADLINE
    grandchild = int((tmp_path / "grandchild").read_text())
    deadline = time.monotonic() + interrupting.DEADLINE
    while time.monotonic() < deadline and pathlib.Path(f"/proc/{grandchild}").exists():
        time.sleep(0.01)
    assert not pathlib.Path(f"/proc/{grandchild}").exists() or _zombie(grandchild)


def _zombie(pid: int) -> bool:
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12's wait_for keeps the cancel")
def test_wait_for_loses_a_cancel_that_comes_as_its_awaitable_completes() -> None:
    """The hang: the watch loop's task was cancelled once (asyncio.run's SIGINT handler) and ran on."""

    async def main() -> object:
        events: asyncio.Queue[int] = asyncio.Queue()
        task = asyncio.create_task(asyncio.wait_for(events.get(), 1.0))
        await asyncio.sleep(0)
        events.put_nowait(1)
        task.cancel()
        return await task

    assert asyncio.run(main()) == 1  # the cancel is gone


def test_the_watch_loop_keeps_a_cancel_that_comes_as_an_event_arrives() -> None:
    async def main() -> None:
        events: asyncio.Queue[tuple[int, str, dict[str, object]]] = asyncio.Queue()
        task = asyncio.create_task(output._next(events, []))
        await asyncio.sleep(0)
        events.put_nowait((0, "ADDED", {}))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert events.qsize() == 1  # and the event is still there

    asyncio.run(main())


def _trace(path: pathlib.Path, jobs: int) -> pathlib.Path:
    """A trace the simulation takes a few seconds over (two queues, eight nodes)."""
    doc = {
        "period": 1,
        "nodes": [{"name": f"n{i}", "cpu": 8, "memory": "32Gi"} for i in range(8)],
        "queues": [{"name": "a", "weight": 1}, {"name": "b", "weight": 2}],
        "jobs": [
            {
                "name": f"j{i}",
                "queue": "ab"[i % 2],
                "arrival": i,
                "duration": 30 + i % 7,
                "tasks": [{"name": "w", "replicas": 1 + i % 4, "requests": {"cpu": "2", "memory": "1Gi"}}],
            }
            for i in range(jobs)
        ],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def _simulate_phase(seen: str) -> str:
    return "reported" if "makespan" in seen else "start-up or running"


@pytest.mark.timeout(900)
def test_simulate_ends_within_a_second_of_a_signal_at_any_moment(tmp_path: pathlib.Path) -> None:
    trace = _trace(tmp_path / "trace.yaml", 300)  # ~10 s of simulation: never done before the signal
    argv = [*interrupting.VBRIDGE, "simulate", str(trace), "--no-plot"]
    rng = interrupting.rng("simulate")
    outcomes = []
    for i in range(interrupting.tries(12)):
        signum = rng.choice(interrupting.SIGNALS)
        outcomes.append(
            interrupting.interrupt(argv, rng.uniform(0, 3), signum, tmp_path / str(i), phase=_simulate_phase)
        )
    print(interrupting.summary("vbridge simulate", outcomes))
    assert [str(o) for o in outcomes if not o.ok()] == []
    assert "start-up or running" in {o.phase for o in outcomes}  # interrupted, not finished before
