"""Admission benchmark over TLS, with the anchor (a no-op TLS server on the same stack) in the same run.

What it measures, its anchor and its flags: bench/README.md.

    .venv/bin/python bench/admission.py [--seconds 10] [--pods 5000] [--rounds 5] [--parts all|servers|pods]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import uvloop

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bridge import errors, queues  # noqa: E402
from bridge import facts as cluster_facts  # noqa: E402
from bridge.k8s import client, kubeconfigs, paths  # noqa: E402
from vbridge.localcluster import certs as cluster_certs  # noqa: E402
from vbridge.localcluster import cluster  # noqa: E402
from webhooks import server  # noqa: E402


def executor_review() -> dict[str, Any]:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "pi-4b1e-exec-1",
            "namespace": "spark",
            "labels": {
                "spark-app-selector": "spark-0123456789abcdef0123456789abcdef",
                "spark-role": "executor",
                "spark-app-name": "pi",
                "spark-exec-id": "1",
                "spark-exec-resourceprofile-id": "0",
                "spark-version": "3.5.3",
            },
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": "pi-4b1e-driver",
                    "uid": "6b0e8c2a-0000-4000-8000-000000000001",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "schedulerName": "volcano",
            "restartPolicy": "Never",
            "hostname": "pi-4b1e-exec-1",
            "containers": [
                {
                    "name": "spark-kubernetes-executor",
                    "image": "apache/spark:3.5.3",
                    "args": ["executor"],
                    "imagePullPolicy": "IfNotPresent",
                    "env": [{"name": f"SPARK_VAR_{i}", "value": "x" * 40} for i in range(12)],
                    "ports": [{"containerPort": 7079, "name": "blockmanager"}],
                    "resources": {"requests": {"cpu": "1", "memory": "1408Mi"}, "limits": {"memory": "1408Mi"}},
                    "volumeMounts": [{"name": "spark-local-dir-1", "mountPath": "/var/data/spark-1"}],
                }
            ],
            "volumes": [{"name": "spark-local-dir-1", "emptyDir": {}}],
        },
    }
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "operation": "CREATE",
            "namespace": "spark",
            "userInfo": {"username": "system:serviceaccount:spark:spark"},
            "object": pod,
        },
    }


def tfjob_review() -> dict[str, Any]:
    role = {
        "replicas": 4,
        "restartPolicy": "OnFailure",
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "tensorflow",
                        "image": "kubeflow/tf-dist-mnist-test:1.0",
                        "resources": {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"nvidia.com/gpu": "1"}},
                    }
                ]
            }
        },
    }
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "dist-mnist", "namespace": "ml"},
        "spec": {"tfReplicaSpecs": {"PS": {**role, "replicas": 2}, "Worker": role}},
    }
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800003",
            "kind": {"group": "kubeflow.org", "version": "v1", "kind": "TFJob"},
            "operation": "CREATE",
            "namespace": "ml",
            "object": job,
        },
    }


class StaticFacts(cluster_facts.Facts):
    """The server's own facts cache, as its watches would fill it: plain namespaces, the default queue."""

    def __init__(self) -> None:
        super().__init__()
        self.queues = {"default": queues.QueueFacts()}

    @property
    def synced(self) -> bool:
        return True


class NoOp:
    """The ceiling: same server stack, reads the body, answers a fixed allow."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        body = b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"x","allowed":true}}'
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


def serve(kind: str, port: int, cert: str, key: str) -> None:
    settings = server.Settings(port=port, certfile=pathlib.Path(cert), keyfile=pathlib.Path(key))
    app: Any = server.App(StaticFacts(), settings) if kind == "real" else NoOp()
    srv = server.server(server.App(StaticFacts(), settings))
    srv.config.app = app
    srv.config.loaded = False
    uvloop.run(srv.serve())


def start(kind: str, port: int, tls: cluster_certs.KeyPair) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, __file__, "--serve", kind, str(port), str(tls.cert), str(tls.key)])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with __import__("socket").create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{kind} server did not start")


def wrk(url: str, body: pathlib.Path, seconds: int) -> float:
    script = body.with_suffix(".lua")
    script.write_text(
        f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
        f'local f = io.open("{body}", "rb")\nwrk.body = f:read("*all")\nf:close()\n'
    )
    out = subprocess.run(
        ["wrk", "-t2", "-c32", f"-d{seconds}s", "-s", str(script), url], capture_output=True, text=True, check=True
    ).stdout
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]


def vegeta_binary() -> str:
    """vegeta, built from its Go module into .cache/bin like our other Go tools (first time: ~30 s)."""
    found = sorted(ROOT.glob(".cache/bin/vegeta-*/vegeta"))
    if not found:
        env = {**__import__("os").environ, "VBRIDGE_BENCH_TOOLS": "1"}
        subprocess.run([str(ROOT / "tools" / "build-binaries.sh")], env=env, check=True, stdout=subprocess.DEVNULL)
        found = sorted(ROOT.glob(".cache/bin/vegeta-*/vegeta"))
    return str(found[-1])


def at_rate(url: str, body: pathlib.Path, seconds: int, rate: int = 500) -> tuple[float, float]:
    """p50 and p99 (ms) at a constant, evenly paced arrival rate (vegeta: open loop, no bursts)."""
    targets = body.with_suffix(".targets")
    targets.write_text(f"POST {url}\nContent-Type: application/json\n@{body}\n")
    vegeta = vegeta_binary()
    attack = subprocess.run(
        [vegeta, "attack", f"-rate={rate}/s", f"-duration={seconds}s", "-insecure", f"-targets={targets}"],
        capture_output=True,
        check=True,
    ).stdout
    report = json.loads(
        subprocess.run([vegeta, "report", "-type=json"], input=attack, capture_output=True, check=True).stdout
    )
    if report["success"] < 1:
        raise RuntimeError(f"vegeta: not every request succeeded: {report.get('errors')}")
    lat = report["latencies"]
    return lat["50th"] / 1e6, lat["99th"] / 1e6


# The executor pods the apiserver sees, by how they arrive. The first is the stream the target
# is about: Spark ≤ 4.1 executors of a driver our webhook admitted (it passed Spark the group
# annotation and the ``vbridge.io/grouped`` label through ``--conf``), the bulk of a cluster's
# Spark pods. The others are measured alongside: executors Spark ≥ 4.2 grouped itself
# (VolcanoFeatureStep; the webhook's matchCondition skips them) and executors that still need
# their group (client mode, or drivers admitted before the bridge), which the webhook patches.
STREAMS = {
    "grouped at the source": ({"vbridge.io/grouped": "true"}, {"scheduling.k8s.io/group-name": "pi-podgroup"}),
    "grouped by Spark's step": ({}, {"scheduling.k8s.io/group-name": "pi-podgroup"}),
    "needing their group": ({}, {}),
}


async def pod_create_rate(lc: cluster.LocalCluster, count: int, ns: str, stream: str) -> float:
    """Pods of one stream created by 32 clients; the pods are deleted afterwards (etcd stays small)."""
    labels, annotations = STREAMS[stream]
    async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=32) as api:
        with contextlib.suppress(errors.ApiError):  # made in an earlier round
            await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
        gate = asyncio.Semaphore(32)
        review = executor_review()["request"]["object"]
        meta = review["metadata"]
        template = {
            **review,
            "metadata": {"labels": {**meta["labels"], **labels}, "annotations": annotations, "namespace": ns},
        }

        async def one(i: int) -> None:
            pod = {**template, "metadata": {**template["metadata"], "name": f"p-{i}"}}
            async with gate:
                await api.request("POST", paths.resource("v1", "pods", namespace=ns), body=pod)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        rate = count / (time.perf_counter() - t0)
        # Unbound pods go at once: nothing is left to slow the next run.
        await api.request("DELETE", paths.resource("v1", "pods", namespace=ns))
        return rate


def pod_create_rates(lc: cluster.LocalCluster, pods: int, rounds: int, tls: cluster_certs.KeyPair, ca: bytes) -> None:
    """Each stream without the webhook and with it, back to back, in an order that flips from one
    measurement to the next (so a drift of the machine falls on both); per stream, the median over
    rounds of with / without."""
    from vbridge import runtime

    hooked_now = False

    def registered(on: bool) -> None:
        nonlocal hooked_now
        if hooked_now == on:
            return

        async def change() -> None:
            async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
                if on:
                    await runtime.register(api, url=f"https://127.0.0.1:{port}", ca_bundle=ca)
                else:
                    await runtime.unregister(api)

        asyncio.run(change())
        hooked_now = on
        time.sleep(1)  # the apiserver picks the configuration up from its watch

    def run(stream: str) -> float:
        namespace = "stream-" + stream.lower().replace(" ", "-").replace("'", "")
        rate = asyncio.run(pod_create_rate(lc, pods, namespace, stream))
        time.sleep(1)  # let the deletions settle
        return rate

    port = cluster.free_port()
    proc = start("real", port, tls)
    rates: dict[str, dict[str, list[float]]] = {"without": {s: [] for s in STREAMS}, "with": {s: [] for s in STREAMS}}
    try:
        for stream in STREAMS:  # warm-up
            run(stream)
        for r in range(rounds):
            for i, stream in enumerate(STREAMS):
                for mode in ("without", "with") if (r * len(STREAMS) + i) % 2 == 0 else ("with", "without"):
                    registered(mode == "with")
                    rates[mode][stream].append(run(stream))
                    print(f"  {mode:7} executors {stream:24} {rates[mode][stream][-1]:5.0f} pods/s", flush=True)
    finally:
        proc.terminate()
        proc.wait(10)
    for stream in STREAMS:
        without, hooked = rates["without"][stream], rates["with"][stream]
        ratio = statistics.median(w / o for w, o in zip(hooked, without, strict=True))
        verdict = " (target ≥ 90 %)" if stream == "grouped at the source" else ""
        print(
            f"apiserver pod creates, executors {stream}: {statistics.median(without):.0f}/s without the webhook, "
            f"{statistics.median(hooked):.0f}/s with it; with / without, median of {rounds} rounds: "
            f"{ratio:.0%}{verdict}",
            flush=True,
        )


def main(seconds: int, pods: int, rounds: int, parts: str) -> None:
    if parts != "pods" and not shutil.which("wrk"):
        sys.exit("wrk is missing: apt-get install wrk")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="vbridge-bench-"))
    pki = cluster_certs.make_pki(tmp / "pki")
    tls = cluster_certs.issue_from(pki.ca, tmp / "pki", "webhook", common_name="bench", hosts=("127.0.0.1",))
    bodies = {"spark-executor": executor_review(), "tfjob": tfjob_review()}
    paths_ = {"spark-executor": "/mutate/spark-apache-org-pod", "tfjob": "/mutate/kubeflow-org-tfjob"}
    rows = []
    for kind in ("real", "noop") if parts != "pods" else ():
        port = cluster.free_port()
        proc = start(kind, port, tls)
        try:
            for name, review in bodies.items():
                body = tmp / f"{name}.json"
                body.write_bytes(json.dumps(review).encode())
                url = f"https://127.0.0.1:{port}{paths_[name]}"
                rate = wrk(url, body, seconds)
                p50, p99 = at_rate(url, body, seconds)
                rows.append((kind, name, rate, p50, p99))
                print(
                    f"{kind:5} {name:15} max {rate:8.0f} req/s   @500 req/s p50 {p50:6.2f} ms  p99 {p99:6.2f} ms",
                    flush=True,
                )
        finally:
            proc.terminate()
            proc.wait(10)
    ceiling = {name: (rate, p99) for kind, name, rate, _p50, p99 in rows if kind == "noop"}
    for kind, name, rate, _p50, p99 in rows:
        if kind == "real":
            top, floor = ceiling[name]
            print(
                f"{name}: {rate:.0f} req/s = {rate / top:.0%} of the no-op ceiling ({top:.0f}; target ≥ 70 %); "
                f"{rate / 2000:.2f}× the 2,000 req/s target; p99 at 500 req/s {p99:.2f} ms (target ≤ 5 ms; "
                f"the no-op server's p99 on this machine: {floor:.2f} ms)"
            )

    if parts == "servers":
        return
    with cluster.LocalCluster() as lc:
        pod_create_rates(lc, pods, rounds, tls, pki.ca.cert.read_bytes())


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(*sys.argv[2:3], int(sys.argv[3]), sys.argv[4], sys.argv[5])  # type: ignore[misc]
    else:
        parser = argparse.ArgumentParser()
        parser.add_argument("--seconds", type=int, default=10)
        parser.add_argument("--pods", type=int, default=5000, help="pods per stream and run")
        parser.add_argument("--rounds", type=int, default=5)
        parser.add_argument("--parts", choices=("all", "servers", "pods"), default="all")
        args = parser.parse_args()
        main(args.seconds, args.pods, args.rounds, args.parts)
