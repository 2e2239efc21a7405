"""The image: built from a clean Dockerfile, runs as non-root with a read-only root filesystem,
holds only runtime dependencies, and its ``vbridge serve`` answers ``/readyz`` against a real
apiserver (the image's own smoke test)."""

from __future__ import annotations

import base64
import json
import pathlib
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Iterator

import pytest
import yaml

from tests.support import podman
from vbridge.localcluster import certs as cluster_certs
from vbridge.localcluster import cluster

# A first build downloads the base's packages and the wheels (minutes); each vfs container start
# copies the image.
pytestmark = [pytest.mark.integration, pytest.mark.image, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def image() -> str:
    reason = podman.available()
    if reason:
        pytest.skip(reason)
    return podman.build()


def test_runs_as_a_numeric_non_root_user_with_labels(image: str) -> None:
    info = json.loads(podman.podman("image", "inspect", image).stdout)[0]
    config = info["Config"]
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"] == ["vbridge"]
    labels = config["Labels"]
    assert labels["org.opencontainers.image.title"] == "volcano-bridge"
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    version = labels["org.opencontainers.image.version"]
    out = subprocess.run(podman.run_argv(image, "--version"), capture_output=True, text=True, env=podman.env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"vbridge {version}"


def test_holds_runtime_dependencies_only(image: str) -> None:
    probe = (
        "import importlib.util as u, json; "
        "print(json.dumps({m: u.find_spec(m) is not None for m in "
        "('pytest', 'kubernetes', 'hypothesis', 'mypy', 'pip', 'aiohttp', 'uvicorn', 'prometheus_client')}))"
    )
    found = json.loads(_python(image, probe))
    assert found == {
        "pytest": False,
        "kubernetes": False,
        "hypothesis": False,
        "mypy": False,
        "pip": False,
        "aiohttp": True,
        "uvicorn": True,
        "prometheus_client": True,
    }
    compilers = subprocess.run(
        podman.run_argv(image, "-c", "command -v gcc cc g++ || true", extra=("--entrypoint=sh",)),
        capture_output=True,
        text=True,
        env=podman.env(),
    )
    assert compilers.stdout.strip() == ""


def test_runs_the_compiled_core(image: str) -> None:
    # The wheel's hot path is mypyc's C extensions (the Dockerfile's build stage).
    assert _python(image, "from scheduler import build; print(build.core())").strip() == "compiled"


def _python(image: str, probe: str) -> str:
    """What ``python3 -c probe`` prints in the image."""
    out = subprocess.run(
        podman.run_argv(image, "-c", probe, extra=("--entrypoint=python3",)),
        capture_output=True,
        text=True,
        env=podman.env(),
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def _inline_kubeconfig(lc: cluster.LocalCluster, folder: pathlib.Path) -> pathlib.Path:
    """The cluster's admin kubeconfig with its files inlined, readable by the container's user."""

    def inline(section: dict[str, str], *keys: str) -> None:
        for key in keys:
            section[f"{key}-data"] = base64.b64encode(pathlib.Path(section.pop(key)).read_bytes()).decode()

    doc = yaml.safe_load(lc.kubeconfig.read_text())
    for entry in doc["clusters"]:
        inline(entry["cluster"], "certificate-authority")
    for entry in doc["users"]:
        inline(entry["user"], "client-certificate", "client-key")
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    path.chmod(0o644)
    return path


@pytest.fixture
def served(image: str, control_plane: cluster.LocalCluster, tmp_path: pathlib.Path) -> Iterator[tuple[int, str]]:
    """``vbridge serve`` in the image: read-only root, non-root, the pod's mounts read-only."""
    mounts = tmp_path / "mounts"
    mounts.mkdir()
    mounts.chmod(0o755)
    pair = cluster_certs.issue_from(
        cluster_certs.KeyPair(
            cert=control_plane.workdir / "pki" / "ca.crt", key=control_plane.workdir / "pki" / "ca.key"
        ),
        mounts / "tls",
        "tls",
        common_name="volcano-bridge-webhook",
        hosts=("127.0.0.1", "localhost"),
    )
    for path in (mounts / "tls", pair.cert, pair.key):
        path.chmod(0o755 if path.is_dir() else 0o644)
    kubeconfig = _inline_kubeconfig(control_plane, mounts).name
    port = cluster.free_port()
    argv = podman.run_argv(
        image,
        "serve",
        f"--kubeconfig=/etc/vbridge/{kubeconfig}",
        f"--tls-cert=/etc/vbridge/tls/{pair.cert.name}",
        f"--tls-key=/etc/vbridge/tls/{pair.key.name}",
        "--host=127.0.0.1",
        f"--port={port}",
        extra=(f"--volume={mounts}:/etc/vbridge:ro", "--name=vbridge-smoke-serve", "--replace"),
    )
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=podman.env())
    try:
        yield port, str(control_plane.workdir / "pki" / "ca.crt")
    finally:
        podman.podman("stop", "--time=10", "vbridge-smoke-serve", timeout=60)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        if proc.stdout is not None:
            proc.stdout.close()


def test_serve_in_the_image_gets_ready_against_the_apiserver(served: tuple[int, str]) -> None:
    port, ca = served
    context = ssl.create_default_context(cafile=ca)
    deadline = time.monotonic() + 240  # the first container start copies the image (vfs storage)
    status, body = 0, b""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", context=context, timeout=2) as reply:
                status, body = reply.status, reply.read()
                if status == 200:
                    break
        except OSError:
            pass
        time.sleep(0.5)
    assert (status, json.loads(body or b"{}")) == (200, {"ready": True})
