"""Run the project's image under podman the way this machine allows (tools/build-image.sh).

vfs storage, runc with cgroupfs, no default ulimits (the machine's VMs lack CAP_SYS_RESOURCE and
mount cgroup v1), host network so a container reaches the loopback apiserver like a local process.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
IMAGE = "localhost/volcano-bridge:dev"
STORE = ("--storage-driver=vfs",)
RUN = ("--runtime=runc", "--cgroup-manager=cgroupfs", "run", "--rm", "--network=host")


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["CONTAINERS_CONF"] = str(ROOT / ".cache" / "image" / "containers.conf")
    return out


def available() -> str | None:
    """Why the image cannot be built here, or None."""
    if os.geteuid() != 0:
        return "building images here needs root (buildah with chroot isolation)"
    if shutil.which("apt-get") is None and shutil.which("podman") is None:
        return "no podman and no apt-get to install it"
    return None


def build() -> str:
    """Build (or rebuild) the image; returns its name."""
    done = subprocess.run(
        [str(ROOT / "tools" / "build-image.sh"), IMAGE], capture_output=True, text=True, timeout=1800, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"tools/build-image.sh failed:\n{done.stderr[-4000:]}")
    return done.stdout.strip().splitlines()[-1]


def podman(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *STORE, *args], capture_output=True, text=True, timeout=timeout, env=env(), check=False
    )


def run_argv(image: str, *args: str, user: str = "65532", extra: tuple[str, ...] = ()) -> list[str]:
    """``podman run`` as the chart runs the pod: read-only root, a numeric non-root user."""
    return ["podman", *STORE, *RUN, "--read-only", f"--user={user}", *extra, image, *args]
