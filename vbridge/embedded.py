"""``vbridge up``: the embedded default, everything in one process on a local control plane.

It starts etcd, kube-apiserver and kube-controller-manager (``vbridge.localcluster``), simulated
nodes, our admission webhook and reconcilers (``vbridge.runtime``) registered through a
MutatingWebhookConfiguration, and the gang scheduler (``scheduler.io``); installs the upstream
CRDs the seed examples need (from the pinned Go modules); applies the seed examples in
``examples/`` (old APIs converted first); and reports their PodGroups until interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import pathlib
import signal
from collections.abc import Callable
from typing import Any

import yaml

from bridge import convert, defaults, errors
from bridge.k8s import client, kubeconfigs, paths
from scheduler import configure as sched_configure
from scheduler.io import loop as sched_loop
from vbridge import runtime
from vbridge.localcluster import certs, cluster, depcrds
from vbridge.nodesim import nodes, simulator
from webhooks import server

__all__ = ["OPERATOR_JOBS", "WITH_OPERATORS", "Options", "job_state", "run"]

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Which upstream CRD sets the seed examples need. MPIJob v1 (training-operator) is chosen over
# v2beta1: the seed MPIJob v1alpha2 converts to v1 (the behaviour-preserving target).
SEED_CRDS = ("spark-operator", "training-operator", "training-operator-mpi")
# `vbridge up --with-operators`: the operators whose CRDs can share one cluster (the training-operator
# serves MPIJob v1, so the mpi-operator, which serves v2beta1 under the same CRD name, is left out).
WITH_OPERATORS = ("spark-operator", "training-operator")
SEEDS = (
    "volcano-job-mpi.yaml",
    "volcano-job-tensorflow.yaml",
    "sparkapplication-pi-volcano.yaml",
    "tfjob-v1alpha1.yaml",
    "mpijob-v1alpha2.yaml",
)


# The operators' jobs `up` reports (apiVersion, plural, kind): with --with-operators the seeds run to
# the end, and their PodGroups are deleted when they finish, so the groups table alone goes quiet.
OPERATOR_JOBS = (
    ("sparkoperator.k8s.io/v1beta2", "sparkapplications", "SparkApplication"),
    ("kubeflow.org/v1", "tfjobs", "TFJob"),
    ("kubeflow.org/v1", "pytorchjobs", "PyTorchJob"),
    ("kubeflow.org/v1", "mpijobs", "MPIJob"),
)


@dataclasses.dataclass(frozen=True)
class Options:
    specs: tuple[nodes.NodeSpec, ...]
    run_seconds: float | None = 30.0
    examples: bool = True
    scheduler_name: str = defaults.SCHEDULER_NAME


async def _apply(api: client.Client, doc: dict[str, Any], namespace: str) -> str:
    doc, _ = convert.to_current(doc)
    group_version, kind = doc["apiVersion"], doc["kind"]
    plural = kind.lower() + "s"
    doc["metadata"] = {**doc.get("metadata", {}), "namespace": namespace}
    try:
        await api.request("POST", paths.resource(group_version, plural, namespace=namespace), body=doc)
        return f"created {kind} {namespace}/{doc['metadata']['name']}"
    except errors.ApiError as exc:
        return f"not created: {kind} {doc['metadata'].get('name')}: {exc.message}"


async def _report(api: client.Client, say: Callable[[str], None], last: list[str]) -> None:
    """Print the PodGroups and Volcano Jobs tables when they changed since the last report."""
    groups = await api.request("GET", paths.resource(defaults.PODGROUP_API, "podgroups"))
    lines = [f"{'NAMESPACE/PODGROUP':64} {'PHASE':10} {'MIN':>4} {'RUNNING':>7} {'DONE':>5} QUEUE"]
    for pg in groups.get("items", []):
        meta, spec, status = pg["metadata"], pg.get("spec", {}), pg.get("status") or {}
        lines.append(
            f"{meta['namespace'] + '/' + meta['name']:64} {status.get('phase', '-'):10} {spec.get('minMember', 0):>4} "
            f"{status.get('running', 0):>7} {status.get('succeeded', 0):>5} {spec.get('queue', '')}"
        )
    try:
        jobs = (await api.request("GET", paths.resource(defaults.BATCH_API, "jobs"))).get("items", [])
    except errors.ApiError:
        jobs = []
    if jobs:
        lines.append(f"{'NAMESPACE/VOLCANO JOB':64} {'PHASE':10} {'RUNNING':>7} {'DONE':>5} RETRIES")
    for job in jobs:
        meta, status = job["metadata"], job.get("status") or {}
        lines.append(
            f"{meta['namespace'] + '/' + meta['name']:64} {(status.get('state') or {}).get('phase', 'Pending'):10} "
            f"{status.get('running', 0):>7} {status.get('succeeded', 0):>5} {status.get('retryCount', 0)}"
        )
    lines += await _operator_jobs(api)
    if lines != last:
        last[:] = lines
        say("\n".join(lines))


async def _operator_jobs(api: client.Client) -> list[str]:
    """A table of the operators' jobs and their state (the operator's own words), if there are any."""
    rows = []
    for api_version, plural, kind in OPERATOR_JOBS:
        try:
            items = (await api.request("GET", paths.resource(api_version, plural))).get("items", [])
        except errors.ApiError:
            continue  # CRD not installed
        for job in items:
            meta = job["metadata"]
            rows.append(f"{meta['namespace'] + '/' + meta['name']:64} {kind:17} {job_state(job) or '-'}")
    return [f"{'NAMESPACE/OPERATOR JOB':64} {'KIND':17} STATE", *rows] if rows else []


def job_state(job: dict[str, Any]) -> str:
    """A SparkApplication's applicationState, or a Kubeflow job's latest true condition."""
    status = job.get("status") or {}
    if "applicationState" in status:
        return str((status["applicationState"] or {}).get("state") or "")
    true = [c.get("type", "") for c in status.get("conditions") or [] if c.get("status") == "True"]
    return str(true[-1]) if true else ""


async def run(lc: cluster.LocalCluster, opts: Options, say: Callable[[str], None]) -> None:
    """Serve until SIGINT/SIGTERM."""
    pki = certs.KeyPair(cert=lc.workdir / "pki" / "ca.crt", key=lc.workdir / "pki" / "ca.key")
    tls = certs.issue_from(pki, lc.workdir / "webhook", "webhook", common_name="volcano-bridge", hosts=("127.0.0.1",))
    port = cluster.free_port()
    settings = server.Settings(port=port, certfile=tls.cert, keyfile=tls.key, scheduler_name=opts.scheduler_name)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=32) as api:
        tasks: list[asyncio.Task[None]] = []
        try:
            sim = simulator.Simulator(api, opts.specs, default_run_seconds=opts.run_seconds)
            await sim.register_nodes()
            say(f"{len(opts.specs)} simulated nodes are Ready.")
            tasks.append(asyncio.create_task(sim.serve()))
            bridge = runtime.Bridge(api, settings)
            tasks.append(asyncio.create_task(bridge.run()))
            while not bridge.started.is_set():
                _raise_if_failed(tasks)
                await asyncio.sleep(0.05)
            await runtime.register(
                api,
                url=f"https://127.0.0.1:{port}",
                ca_bundle=pki.cert.read_bytes(),
                scheduler_name=opts.scheduler_name,
            )
            say(f"admission webhook on https://127.0.0.1:{port} (MutatingWebhookConfiguration {runtime.NAME})")
            conf = sched_configure.parse("", scheduler_name=opts.scheduler_name)
            tasks.append(asyncio.create_task(sched_loop.Scheduler(api, conf).run()))
            say(f"gang scheduler running for schedulerName {opts.scheduler_name!r}")
            if opts.examples:
                await _seed(api, say)
            last: list[str] = []
            while not stop.is_set():
                _raise_if_failed(tasks)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 3)
                if opts.examples and not stop.is_set():
                    await _report(api, say, last)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            with contextlib.suppress(errors.BridgeError):
                await runtime.unregister(api)


def _raise_if_failed(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


async def _seed(api: client.Client, say: Callable[[str], None]) -> None:
    docs: list[dict[str, Any]] = []
    for name in SEED_CRDS:
        try:
            for path in depcrds.ensure(name, ROOT / ".cache" / "dep-crds"):
                docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
        except errors.BridgeError as exc:
            say(f"upstream CRDs {name} unavailable ({exc}); its examples are skipped")
    await cluster.apply_crds(api, docs)
    await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": "seed"}})
    for name in SEEDS:
        for doc in yaml.safe_load_all((ROOT / "examples" / name).read_text()):
            if doc:
                say("  " + await _apply(api, doc, "seed"))
