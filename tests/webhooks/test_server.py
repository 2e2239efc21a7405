"""The HTTPS server itself, on loopback: limits, timeouts and health, with a real TLS client."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import pathlib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from bridge import defaults, errors
from tests.builders import kubeflow as kf
from tests.support import admission as support
from tests.support import loopthread
from vbridge import cli
from vbridge.commands import serve
from vbridge.localcluster import certs as cluster_certs
from vbridge.localcluster import cluster
from webhooks import admission, reviews, server


@pytest.fixture(scope="module")
def https(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, pathlib.Path]]:
    yield from _serving(tmp_path_factory, read_timeout=0.5)


@pytest.fixture(scope="module")
def https_default(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, pathlib.Path]]:
    yield from _serving(tmp_path_factory)


def _serving(tmp_path_factory: pytest.TempPathFactory, **tuned: Any) -> Iterator[tuple[str, pathlib.Path]]:
    folder = tmp_path_factory.mktemp("tls")
    pki = cluster_certs.make_pki(folder)
    serving = cluster_certs.issue_from(pki.ca, folder, "webhook", common_name="volcano-bridge", hosts=("127.0.0.1",))
    port = cluster.free_port()
    settings = server.Settings(port=port, certfile=serving.cert, keyfile=serving.key, **tuned)

    async def main(ready: asyncio.Event) -> None:
        await server.serve(server.App(support.Facts(), settings), started=ready)

    thread = loopthread.LoopThread(main, "webhook-server").start()
    try:
        yield f"https://127.0.0.1:{port}", pki.ca.cert
    finally:
        thread.stop()


def test_health_and_not_found(https: tuple[str, pathlib.Path]) -> None:
    url, ca = https
    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca))) as http:
        assert http.get(url + "/healthz").json() == {"status": "ok"}
        assert http.get(url + "/readyz").json() == {"ready": True}
        assert http.get(url + "/nope").status_code == 404


def test_review_round_trip_over_tls(https: tuple[str, pathlib.Path]) -> None:
    url, ca = https
    job = kf.tfjob("mnist", Worker=kf.replica(2))
    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca))) as http:
        out = http.post(url + "/mutate/kubeflow-org-tfjob", content=support.review(job, kind=support.TF))
    assert out.status_code == 200
    assert out.json()["response"]["allowed"] is True and out.json()["response"]["patchType"] == "JSONPatch"


def test_body_over_3_mib_is_refused_on_bytes_read(https: tuple[str, pathlib.Path]) -> None:
    url, ca = https

    def chunks() -> Iterator[bytes]:  # no Content-Length: the cap must hold on what is read
        for _ in range(4):
            yield b" " * (1024 * 1024)

    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca))) as http:
        out = http.post(url + "/mutate/kubeflow-org-tfjob", content=chunks())
    assert out.status_code == 413 and "3 MiB" in out.json()["error"]
    assert reviews.MAX_BODY == 3 * 1024 * 1024


def test_slow_client_times_out(https: tuple[str, pathlib.Path]) -> None:
    url, ca = https
    host, port = url.removeprefix("https://").split(":")
    ctx = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection((host, int(port)), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname=host) as tls,
    ):
        tls.sendall(b"POST /mutate/kubeflow-org-tfjob HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        started = time.monotonic()
        reply = ""
        while not reply.endswith("}"):
            chunk = tls.recv(4096).decode()
            if not chunk:
                break
            reply += chunk
    assert reply.startswith("HTTP/1.1 408") and time.monotonic() - started < 3
    assert json.loads(reply.split("\r\n\r\n", 1)[1]) == {"error": "request body not received in time"}


def _swap(folder: pathlib.Path, stamp: str, cert: bytes, key: bytes) -> None:
    """Write a pair as the kubelet updates a mounted Secret: a new folder, then one symlink swap."""
    fresh = folder / stamp
    fresh.mkdir()
    (fresh / "tls.crt").write_bytes(cert)
    (fresh / "tls.key").write_bytes(key)
    (folder / "..tmp").symlink_to(stamp)
    (folder / "..tmp").replace(folder / "..data")
    for name in ("tls.crt", "tls.key"):
        if not (folder / name).is_symlink():
            (folder / name).symlink_to(f"..data/{name}")


def _served(port: int, ca: pathlib.Path) -> bytes:
    """The certificate a new connection gets (DER)."""
    ctx = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def _der(pem_path: pathlib.Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem_path.read_text())


def test_a_certificate_swapped_on_disk_is_served_to_new_connections(tmp_path: pathlib.Path) -> None:
    pki = cluster_certs.make_pki(tmp_path / "pki")
    first = cluster_certs.issue_from(pki.ca, tmp_path / "pki", "first", common_name="first", hosts=("127.0.0.1",))
    second = cluster_certs.issue_from(pki.ca, tmp_path / "pki", "second", common_name="second", hosts=("127.0.0.1",))
    mounted = tmp_path / "tls"
    mounted.mkdir()
    _swap(mounted, "..1", first.cert.read_bytes(), first.key.read_bytes())
    port = cluster.free_port()
    settings = server.Settings(port=port, certfile=mounted / "tls.crt", keyfile=mounted / "tls.key", reload_seconds=0.2)
    apps: list[server.App] = []

    async def main(ready: asyncio.Event) -> None:
        app = server.App(support.Facts(), settings)
        apps.append(app)
        await server.serve(app, started=ready)

    thread = loopthread.LoopThread(main, "webhook-reload").start()
    try:
        assert _served(port, pki.ca.cert) == _der(first.cert)
        with httpx.Client(verify=ssl.create_default_context(cafile=str(pki.ca.cert))) as kept:
            assert kept.get(f"https://127.0.0.1:{port}/healthz").status_code == 200  # a connection kept open
            swapped = time.monotonic()
            _swap(mounted, "..2", second.cert.read_bytes(), second.key.read_bytes())
            while _served(port, pki.ca.cert) != _der(second.cert):
                assert time.monotonic() - swapped < 3, "the new certificate was not served within 3 s"
                time.sleep(0.05)
            assert kept.get(f"https://127.0.0.1:{port}/healthz").status_code == 200  # still served
        # A broken pair (the first certificate with the second's key) is refused: the second stays.
        reloader = apps[0].reloader
        assert reloader is not None
        loaded = reloader.reloads
        _swap(mounted, "..3", first.cert.read_bytes(), second.key.read_bytes())
        time.sleep(1.0)  # five checks
        assert reloader.reloads == loaded
        assert _served(port, pki.ca.cert) == _der(second.cert)
        with httpx.Client(verify=ssl.create_default_context(cafile=str(pki.ca.cert))) as http:
            job = kf.tfjob("mnist", Worker=kf.replica(2))
            out = http.post(
                f"https://127.0.0.1:{port}/mutate/kubeflow-org-tfjob", content=support.review(job, kind=support.TF)
            )
            assert out.status_code == 200 and out.json()["response"]["allowed"] is True
        # Once the files are sound again, they are loaded.
        _swap(mounted, "..4", first.cert.read_bytes(), first.key.read_bytes())
        reverted = time.monotonic()
        while _served(port, pki.ca.cert) != _der(first.cert):
            assert time.monotonic() - reverted < 3
            time.sleep(0.05)
    finally:
        thread.stop()


def _job(tasks: int) -> bytes:
    spec = {"containers": [{"name": "w", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "wide", "namespace": "team-a"},
        "spec": {
            "minAvailable": 1,
            "tasks": [{"name": f"t{i}", "replicas": 1, "template": {"spec": spec}} for i in range(tasks)],
        },
    }
    return support.review(job, kind=("batch.volcano.sh", "v1alpha1", "Job"))


def test_large_reviews_run_in_worker_threads_while_small_ones_stay_on_the_loop(
    https_default: tuple[str, pathlib.Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six 10,000-task Volcano Jobs in flight: health checks and small reviews are answered meanwhile."""
    url, ca = https_default
    threads: dict[str, set[str]] = {"small": set(), "large": set()}
    real = admission.handle

    def handle(raw: bytes, *args: Any, **kwargs: Any) -> bytes:
        threads["large" if len(raw) > defaults.OFFLOOP_REVIEW_BYTES else "small"].add(threading.current_thread().name)
        return real(raw, *args, **kwargs)

    monkeypatch.setattr(admission, "handle", handle)
    heavy, small = _job(10_000), support.review(kf.tfjob("mnist", Worker=kf.replica(2)), kind=support.TF)
    assert len(heavy) > defaults.OFFLOOP_REVIEW_BYTES > len(small)
    verify = ssl.create_default_context(cafile=str(ca))

    def small_latencies(http: httpx.Client, until: Callable[[], bool], least: int) -> list[float]:
        took: list[float] = []
        while len(took) < least or not until():
            started = time.perf_counter()
            assert http.get(url + "/healthz").status_code == 200
            out = http.post(url + support.TF_PATH, content=small)
            took.append(time.perf_counter() - started)
            assert out.json()["response"]["allowed"] is True
        return took

    with httpx.Client(verify=verify, timeout=120) as http:
        alone = small_latencies(http, lambda: True, 50)
        with concurrent.futures.ThreadPoolExecutor(6) as pool, httpx.Client(verify=verify, timeout=120) as big:
            answers = [pool.submit(big.post, url + "/mutate/batch-volcano-sh-job", content=heavy) for _ in range(6)]
            during = small_latencies(http, lambda: all(a.done() for a in answers), 20)
            finished_meanwhile = sum(not a.done() for a in answers)
            results = [a.result() for a in answers]
    ordered = sorted(alone), sorted(during)
    print(f"\nsmall review + healthz p99 (ms): alone {_p99(ordered[0]):.1f}, six large {_p99(ordered[1]):.1f}")
    answered = [(r.status_code, r.json().get("response", {}).get("allowed")) for r in results]
    assert answered == [(200, True)] * 6, [r.text[:200] for r in results]
    assert threads["small"] == {"webhook-server"}  # the event loop's thread
    assert threads["large"] and all(name.startswith("vbridge-review") for name in threads["large"])
    assert len(threads["large"]) <= defaults.HEAVY_REVIEWS
    assert len(during) >= 20 and finished_meanwhile == 0  # small ones were answered while large ones ran


def _p99(ordered: list[float]) -> float:
    return ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1000


def test_no_secret_from_a_reviewed_object_reaches_the_log(
    https: tuple[str, pathlib.Path], caplog: pytest.LogCaptureFixture
) -> None:
    url, ca = https
    token = "ghp_" + "s3cr3tT0k3nV4lu3" * 2
    env = [{"name": "GITHUB_TOKEN", "value": token}]
    good = kf.tfjob("mnist", Worker=kf.replica(2))
    good["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"] = env
    bad = json.loads(json.dumps(good))
    bad["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = token  # a denial that names the field
    labels = {"training.kubeflow.org/job-name": "x"}
    pod = {
        "metadata": {"name": "p", "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i", "env": env}]},
    }
    with caplog.at_level(logging.DEBUG), httpx.Client(verify=ssl.create_default_context(cafile=str(ca))) as http:
        answers = [
            http.post(url + support.TF_PATH, content=support.review(good, kind=support.TF)),
            http.post(url + support.TF_PATH, content=support.review(bad, kind=support.TF)),
            http.post(url + "/mutate/kubeflow-org-pod", content=support.review(pod, kind=support.POD)),
            http.post(url + support.TF_PATH, content=support.review(good, kind=support.TF)[:-10]),  # cut short
        ]
    assert [a.status_code for a in answers] == [200] * 4
    assert answers[0].json()["response"]["allowed"] is True and answers[1].json()["response"]["allowed"] is False
    assert token not in caplog.text and "s3cr3t" not in caplog.text


TUNED = ("--max-connections=10", "--max-pending-connections=20", "--review-threads=3")


def test_serve_flags_reach_the_settings(tmp_path: pathlib.Path) -> None:
    for name in ("tls.crt", "tls.key", "ca.crt"):
        (tmp_path / name).write_text("x")
    argv = ["serve", f"--tls-cert={tmp_path / 'tls.crt'}", f"--tls-key={tmp_path / 'tls.key'}"]
    plain = serve.settings(cli.parser("serve").parse_args(argv))
    assert (plain.client_ca, plain.header_timeout, plain.max_header_bytes, plain.max_connections) == (
        None,
        defaults.HEADER_TIMEOUT_SECONDS,
        defaults.MAX_HEADER_BYTES,
        defaults.MAX_CONNECTIONS,
    )
    tuned = serve.settings(
        cli.parser("serve").parse_args(
            [*argv, f"--client-ca={tmp_path / 'ca.crt'}", "--header-timeout=2", "--max-header-bytes=1024", *TUNED]
        )
    )
    assert (tuned.client_ca, tuned.header_timeout, tuned.max_header_bytes, tuned.max_connections) == (
        tmp_path / "ca.crt",
        2.0,
        1024,
        10,
    )
    assert (tuned.heavy_reviews, tuned.max_pending, plain.max_pending) == (3, 20, defaults.MAX_PENDING_CONNECTIONS)
    with pytest.raises(errors.ConfigError, match="does not exist"):
        serve.settings(cli.parser("serve").parse_args([*argv, f"--client-ca={tmp_path / 'nope'}"]))
    with pytest.raises(errors.ConfigError, match="--max-connections must be positive"):
        serve.settings(cli.parser("serve").parse_args([*argv, "--max-connections=0"]))
