"""One container as a local process: start, probe, restart with backoff, stop gracefully.

The process is ``nsenter --net=<netns> unshare --mount -- sh -c <rootfs script>`` (each ``exec``s
the next, so the PID is the container's): it lives in the pod's network namespace and in a
private mount namespace with the pod's volumes. Decisions (restart or not, backoff, probe
thresholds, status bodies) are ``containers``'; this module only runs and observes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import datetime
import pathlib
import signal
import ssl
from collections.abc import Callable, Mapping, Sequence

from vbridge.nodesim import containers

__all__ = ["Container", "check", "exit_code"]


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _die_with_parent() -> None:  # in the child, between fork and exec
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def exit_code(returncode: int) -> int:
    """A shell's view: killed by signal N is 128+N."""
    return 128 - returncode if returncode < 0 else returncode


async def check(probe: containers.Probe, host: str) -> bool:
    """One probe attempt, as the kubelet makes it (HTTPS without verifying; 200-399 is success)."""
    try:
        async with asyncio.timeout(probe.timeout):
            ctx = None
            if probe.kind == "http" and probe.scheme == "HTTPS":
                ctx = ssl.create_default_context()
                ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            reader, writer = await asyncio.open_connection(host, probe.port, ssl=ctx)
            try:
                if probe.kind == "tcp":
                    return True
                request = f"GET {probe.path} HTTP/1.0\r\nHost: {host}\r\nUser-Agent: kube-probe/sim\r\n\r\n"
                writer.write(request.encode())
                await writer.drain()
                line = await reader.readline()
                parts = line.split()
                return len(parts) >= 2 and parts[1].isdigit() and 200 <= int(parts[1]) < 400
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
    except (OSError, TimeoutError, ssl.SSLError, ValueError):
        return False


class Container:
    def __init__(
        self,
        status: containers.ContainerStatus,
        *,
        argv: Sequence[str],
        env: Mapping[str, str],
        logs: pathlib.Path,
        restart_policy: str,
        pod_ip: str,
        readiness: containers.Probe | None,
        liveness: containers.Probe | None,
        backoff: tuple[float, float],
        changed: Callable[[], None],
    ) -> None:
        self.status = status
        self.argv, self.env, self.logs = list(argv), dict(env), logs
        self.policy, self.pod_ip = restart_policy, pod_ip
        self.readiness, self.liveness = readiness, liveness
        self.backoff = backoff
        self.changed = changed
        self.proc: asyncio.subprocess.Process | None = None
        self.stopping = False
        self.task: asyncio.Task[None] | None = None
        self.started_at: float | None = None  # loop time the first process started
        self.ready_at: float | None = None  # loop time it first became ready

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def _spawn(self) -> asyncio.subprocess.Process:
        self.logs.mkdir(parents=True, exist_ok=True)
        with (self.logs / f"{self.status.restarts}.log").open("ab") as log:
            return await asyncio.create_subprocess_exec(
                *self.argv,
                env=self.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                preexec_fn=_die_with_parent,
                start_new_session=True,
            )

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self.stopping:
            try:
                self.proc = await self._spawn()
            except OSError as exc:  # the kubelet's RunContainerError: retried with the same backoff
                self.status.restarts += 1
                self.status.waiting("RunContainerError", str(exc))
                self.changed()
                await asyncio.sleep(
                    max(1.0, containers.backoff(self.status.restarts, first=self.backoff[0], most=self.backoff[1]))
                )
                continue
            self.started_at = self.started_at or loop.time()
            self.status.running(_now())
            self.status.ready = self.readiness is None
            self.changed()
            probes = [asyncio.create_task(self._probe(p, live)) for p, live in self._probes()]
            code = exit_code(await self.proc.wait())
            for task in probes:
                task.cancel()
            restart = not self.stopping and containers.should_restart(self.policy, code)
            self.status.terminated(code, _now(), final=not restart)
            self.changed()
            if not restart:
                return
            self.status.restarts += 1
            delay = containers.backoff(self.status.restarts, first=self.backoff[0], most=self.backoff[1])
            if delay:
                self.status.waiting("CrashLoopBackOff", f"back-off {delay:.0f}s restarting failed container")
                self.changed()
                await asyncio.sleep(delay)

    def _probes(self) -> list[tuple[containers.Probe, bool]]:
        return [(p, live) for p, live in ((self.readiness, False), (self.liveness, True)) if p is not None]

    async def _probe(self, probe: containers.Probe, liveness: bool) -> None:
        tracker = containers.Tracker(probe, ok=liveness)
        await asyncio.sleep(probe.initial_delay)
        while True:
            if tracker.observe(await check(probe, self.pod_ip)):
                if liveness:  # failed: kill it, the restart policy decides what follows
                    if self.proc and self.proc.returncode is None:
                        self.proc.kill()
                    return
                self.status.ready = tracker.ok
                if tracker.ok and self.ready_at is None:
                    self.ready_at = asyncio.get_running_loop().time()
                self.changed()
            await asyncio.sleep(probe.period)

    async def stop(self, grace: float) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; returns once the process is gone."""
        self.stopping = True
        proc = self.proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if self.task is not None:  # let it record the exit; cancel it if it sleeps in a backoff
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(self.task, 2.0)
        if "terminated" not in self.status.state:
            self.status.terminated(exit_code(proc.returncode or 0) if proc else 0, _now(), final=True)
