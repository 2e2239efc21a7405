"""Clear errors when a binary is missing, a port is taken or a component dies; never an orphan.

These start real processes (the Go-built etcd, and small stand-in executables that fail the
way a broken binary would); nothing is mocked.
"""

from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from bridge import errors
from vbridge.localcluster import binaries, cluster, processes

pytestmark = pytest.mark.integration


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = pathlib.Path(f"/proc/{pid}/stat").read_text().split()[2] if pathlib.Path(f"/proc/{pid}").exists() else "X"
    return state != "Z"


def _bins_with(tmp: pathlib.Path, bins: binaries.Binaries, **scripts: str) -> binaries.Binaries:
    tmp.mkdir(parents=True, exist_ok=True)
    for name in binaries.CONTROL_PLANE:
        target = tmp / name
        if name in scripts:
            target.write_text("#!/bin/sh\n" + scripts[name])
            target.chmod(0o755)
        else:
            target.symlink_to(bins.path(name))
    return binaries.Binaries(folder=tmp, extras={})


def test_missing_binary_names_it_and_how_to_build(tmp_path: pathlib.Path, bins: binaries.Binaries) -> None:
    fake = _bins_with(tmp_path, bins)
    (tmp_path / "kube-apiserver").unlink()
    with pytest.raises(errors.BinaryMissingError, match=r"kube-apiserver.*build-binaries"):
        cluster.LocalCluster(tmp_path / "w", bins=fake).start()


def test_taken_port_is_reported(tmp_path: pathlib.Path, bins: binaries.Binaries) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(errors.PortInUseError, match=f"kube-apiserver port {port}"):
            cluster.LocalCluster(tmp_path, bins=bins, ports=cluster.Ports(apiserver=port)).start()


def test_apiserver_that_dies_shows_its_last_log_lines(tmp_path: pathlib.Path, bins: binaries.Binaries) -> None:
    fake = _bins_with(
        tmp_path / "bin", bins, **{"kube-apiserver": 'echo "flag provided but not defined: -x"\nexit 3\n'}
    )
    lc = cluster.LocalCluster(tmp_path / "w", bins=fake)
    with pytest.raises(errors.StartupError) as info:
        lc.start()
    assert "kube-apiserver exited with code 3" in str(info.value)
    assert "flag provided but not defined" in info.value.log_tail
    assert lc.procs == []  # etcd, already started, was stopped too


def test_apiserver_that_never_gets_ready_times_out_with_its_log(
    tmp_path: pathlib.Path, bins: binaries.Binaries
) -> None:
    fake = _bins_with(tmp_path / "bin", bins, **{"kube-apiserver": 'echo "waiting for etcd..."\nexec sleep 600\n'})
    lc = cluster.LocalCluster(tmp_path / "w", bins=fake, start_timeout=2)
    with pytest.raises(errors.StartupError, match="kube-apiserver did not become ready within 2 s") as info:
        lc.start()
    assert "waiting for etcd" in info.value.log_tail


def test_children_die_with_their_parent(tmp_path: pathlib.Path) -> None:
    """A test runner killed with SIGKILL leaves no control-plane process behind."""
    script = textwrap.dedent(f"""
        import pathlib, sys, time
        from vbridge.localcluster import processes
        p = processes.Process("sleeper", ["/bin/sleep", "300"], log=pathlib.Path({str(tmp_path / "log")!r}))
        p.start()
        print(p.pid, flush=True)
        time.sleep(300)
    """)
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as parent:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_stop_is_idempotent_and_kills_stubborn_children(tmp_path: pathlib.Path) -> None:
    stubborn = tmp_path / "stubborn"
    stubborn.write_text("#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 0.1; done\n")
    stubborn.chmod(0o755)
    proc = processes.Process("stubborn", [str(stubborn)], log=tmp_path / "log")
    proc.start()
    pid = proc.pid
    assert pid is not None and proc.alive()
    proc.stop(timeout=0.5)
    assert not _alive(pid)
    proc.stop()
