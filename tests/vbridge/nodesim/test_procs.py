"""procs.Container with plain local processes (no namespaces): restarts, probes, graceful stop."""

from __future__ import annotations

import asyncio
import pathlib
import signal

from vbridge.nodesim import containers, procs


def _container(tmp_path: pathlib.Path, script: str, policy: str, **kw: object) -> procs.Container:
    return procs.Container(
        containers.ContainerStatus("c", "img"),
        argv=["/bin/sh", "-c", script],
        env={"PATH": "/usr/bin:/bin"},
        logs=tmp_path / "logs",
        restart_policy=policy,
        pod_ip="127.0.0.1",
        readiness=kw.get("readiness"),  # type: ignore[arg-type]
        liveness=None,
        backoff=(0.05, 0.1),
        changed=lambda: None,
    )


def test_on_failure_restarts_until_it_succeeds(tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "tries"

    async def main() -> containers.ContainerStatus:
        c = _container(tmp_path, f"echo x >> {marker}; [ $(wc -l < {marker}) -ge 3 ] || exit 3", "OnFailure")
        c.start()
        assert c.task is not None
        await asyncio.wait_for(c.task, 10)
        return c.status

    status = asyncio.run(main())
    assert status.restarts == 2 and status.final
    assert status.state["terminated"]["exitCode"] == 0 and status.last is not None
    assert status.last["terminated"]["exitCode"] == 3
    assert (tmp_path / "logs" / "0.log").exists()


def test_stop_kills_what_ignores_sigterm_after_the_grace_period(tmp_path: pathlib.Path) -> None:
    async def main() -> tuple[containers.ContainerStatus, float]:
        c = _container(tmp_path, "trap '' TERM; while :; do sleep 0.1; done", "Always")
        c.start()
        while c.proc is None:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await c.stop(0.5)
        return c.status, loop.time() - t0

    status, took = asyncio.run(main())
    assert status.state["terminated"]["exitCode"] == 128 + signal.SIGKILL and status.final
    assert 0.5 <= took < 5


def test_probe_checks_tcp_and_http(tmp_path: pathlib.Path) -> None:
    async def main() -> list[bool]:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            line = await reader.readline()
            writer.write(b"HTTP/1.0 200 OK\r\n\r\n" if b"/ok" in line else b"HTTP/1.0 503 No\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return [
                await procs.check(containers.Probe("tcp", port), "127.0.0.1"),
                await procs.check(containers.Probe("http", port, "/ok"), "127.0.0.1"),
                await procs.check(containers.Probe("http", port, "/bad"), "127.0.0.1"),
            ]
        finally:
            server.close()
            await server.wait_closed()

    assert asyncio.run(main()) == [True, True, False]
    assert procs.exit_code(-9) == 137 and procs.exit_code(3) == 3
