from __future__ import annotations

from typing import Any

import pytest

from vbridge.nodesim import containers, rootfs
from vbridge.nodesim import runtime as node_runtime

SPEC: dict[str, Any] = {"name": "web", "ports": [{"name": "https", "containerPort": 9443}]}


def test_argv_uses_the_image_entrypoint_and_expands() -> None:
    env = {"PORT": "9443"}
    image = {"entrypoint": ["vbridge"], "cmd": ["--help"], "env": env}
    assert containers.argv({}, **image) == ["vbridge", "--help"]
    assert containers.argv({"args": ["serve", "--port=$(PORT)"]}, **image) == ["vbridge", "serve", "--port=9443"]
    assert containers.argv({"command": ["/bin/sh", "-c"], "args": ["exit 3"]}, **image) == ["/bin/sh", "-c", "exit 3"]
    assert containers.localize(["vbridge", "x"], {"vbridge": "/venv/bin/vbridge"}) == ["/venv/bin/vbridge", "x"]
    assert containers.localize(["/opt/vbridge/bin/vbridge"], {"vbridge": "/v"}) == ["/v"]


def test_restart_policy_and_backoff() -> None:
    assert containers.should_restart("Always", 0) and containers.should_restart("OnFailure", 1)
    assert not containers.should_restart("OnFailure", 0) and not containers.should_restart("Never", 1)
    delays = [containers.backoff(n, first=10, most=300) for n in range(1, 9)]
    assert delays == [0, 10, 20, 40, 80, 160, 300, 300]


def test_probe_spec_and_thresholds() -> None:
    probe = containers.probe(
        {"httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"}, "periodSeconds": 1}, SPEC
    )
    assert probe == containers.Probe("http", 9443, "/readyz", "HTTPS", period=1.0)
    assert containers.probe({"tcpSocket": {"port": 80}}, SPEC) == containers.Probe("tcp", 80, "", "")
    assert containers.probe({"exec": {"command": ["true"]}}, SPEC) is None
    with pytest.raises(ValueError):
        containers.probe({"tcpSocket": {"port": "nope"}}, SPEC)
    ready = containers.Tracker(containers.Probe("tcp", 1, failure_threshold=2), ok=False)
    assert ready.observe(True) and ready.ok
    assert not ready.observe(False) and ready.ok  # one failure is below the threshold
    assert ready.observe(False) and not ready.ok


def test_status_transitions_and_phase() -> None:
    s = containers.ContainerStatus("a", "img")
    body = containers.pod_status([s], pod_ip="198.51.100.3", host_ip="h", start_time="T", now="T")["status"]
    assert (
        body["phase"] == "Pending" and body["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"
    )
    s.running("T1")
    s.ready = True
    body = containers.pod_status([s], pod_ip="ip", host_ip="h", start_time="T", now="T1")["status"]
    assert body["phase"] == "Running" and {c["type"]: c["status"] for c in body["conditions"]}["Ready"] == "True"
    s.terminated(3, "T2", final=False)
    s.restarts += 1
    s.waiting("CrashLoopBackOff")
    out = s.body()
    assert out["lastState"]["terminated"]["exitCode"] == 3 and out["restartCount"] == 1 and not out["ready"]
    assert containers.pod_status([s], pod_ip="ip", host_ip="h", start_time="T", now="T")["status"]["phase"] == "Running"
    s.running("T3")
    s.terminated(0, "T4", final=True)
    assert (
        containers.pod_status([s], pod_ip="ip", host_ip="h", start_time="T", now="T")["status"]["phase"] == "Succeeded"
    )
    s.terminated(1, "T4", final=True)
    assert containers.pod_status([s], pod_ip="ip", host_ip="h", start_time="T", now="T")["status"]["phase"] == "Failed"


def test_repository_of_an_image() -> None:
    assert node_runtime.repository("localhost/volcano-bridge:dev") == "localhost/volcano-bridge"
    assert node_runtime.repository("localhost:5000/vb@sha256:ab") == "localhost:5000/vb"
    assert node_runtime.repository("volcano-bridge") == "volcano-bridge"


def test_rootfs_script_makes_missing_mount_points_without_touching_the_host() -> None:
    host = {"/", "/etc", "/run", "/usr", "/data"}
    script = rootfs.script(
        root="/r",
        scratch="/s",
        entries=[rootfs.Entry("etc", "dir"), rootfs.Entry("bin", "link", "usr/bin"), rootfs.Entry("f", "file")],
        binds=[
            rootfs.Bind("/v/tls", "/tls", read_only=True),
            rootfs.Bind("/v/cfg", "/etc/app/cfg", read_only=True),
            rootfs.Bind("/v/sa", "/var/run/secrets/sa"),
            rootfs.Bind("/v/data", "/data"),
            rootfs.Bind("/v/one", "/etc/x/one.conf", is_file=True),
        ],
        argv=["vbridge", "serve", "--x=a b"],
        workdir="/w",
        path="/venv/bin:/usr/bin",
        exists=host.__contains__,
        realpath=lambda p: p.replace("/var/run", "/run"),
    ).splitlines()
    assert script[:3] == ["set -e", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "mount -t tmpfs -o mode=755 tmpfs /r"]
    assert "mkdir /r/etc && mount --rbind /etc /r/etc" in script and "ln -s usr/bin /r/bin" in script
    assert "touch /r/f && mount --bind /f /r/f" in script
    overlays = [line for line in script if line.startswith("mount -t overlay")]
    assert overlays == [
        "mount -t overlay overlay -o lowerdir=/etc,upperdir=/s/overlay0/upper,workdir=/s/overlay0/work /r/etc",
        "mount -t overlay overlay -o lowerdir=/run,upperdir=/s/overlay1/upper,workdir=/s/overlay1/work /r/run",
    ]
    assert "mkdir -p /r/tls" in script and "mkdir -p /r/run/secrets/sa" in script
    assert "mkdir -p /r/etc/x && touch /r/etc/x/one.conf" in script and "mkdir -p /r/data" not in script
    assert "mount --bind -o ro /v/tls /r/tls" in script and "mount --bind /v/data /r/data" in script
    assert script.index("mount --bind -o ro /v/tls /r/tls") > script.index(overlays[-1])
    assert script[-1] == "exec chroot /r /usr/bin/env --chdir=/w -- PATH=/venv/bin:/usr/bin vbridge serve '--x=a b'"


def test_rootfs_script_keeps_the_interpreter_and_checkout_visible_under_a_volume() -> None:
    """The chart mounts an emptyDir at /tmp; a checkout (and its virtualenv) under /tmp must stay."""
    script = rootfs.script(
        root="/r",
        scratch="/s",
        entries=[rootfs.Entry("tmp", "dir"), rootfs.Entry("opt", "dir")],
        binds=[rootfs.Bind("/v/tmp", "/tmp")],
        argv=["vbridge"],
        exists={"/", "/tmp", "/opt"}.__contains__,
        realpath=lambda p: p,
        keep=["/tmp/ci/.venv", "/opt/python", "/tmp/ci"],
    ).splitlines()
    volume = script.index("mount --bind /v/tmp /r/tmp")
    checkout = script.index("mkdir -p /r/tmp/ci && mount --rbind /tmp/ci /r/tmp/ci")
    venv = script.index("mkdir -p /r/tmp/ci/.venv && mount --rbind /tmp/ci/.venv /r/tmp/ci/.venv")
    assert volume < checkout < venv < len(script) - 1
    assert not any("/opt/python" in line for line in script)  # no volume hides it: nothing to do
    assert script[-1] == "exec chroot /r /usr/bin/env --chdir=/ -- PATH=/usr/local/bin:/usr/bin:/bin vbridge"
