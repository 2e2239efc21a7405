"""``vbridge up``: the embedded default, everything in one process on a local control plane.

It starts etcd, kube-apiserver and kube-controller-manager (``vbridge.localcluster``), simulated
nodes, our admission webhook and reconcilers (``vbridge.runtime``) registered through a
MutatingWebhookConfiguration, and the gang scheduler (``scheduler.io``); installs the upstream
CRDs the seed examples need (from the pinned Go modules); applies the seed examples in
``examples/`` (old APIs converted first; on a reused ``--workdir`` what exists is kept); and
shows ``vbridge list``'s tables of every namespace (:mod:`vbridge.commands.listing`) as they
change (:mod:`vbridge.commands.live`: redrawn in place on a terminal, a timestamped line per
change otherwise) until interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import pathlib
import shutil
import sys
from collections.abc import Callable
from typing import Any

import yaml

from bridge import convert, defaults, errors, keys
from bridge.k8s import client, kubeconfigs, paths
from scheduler import configure
from scheduler.io import loop
from vbridge import runtime
from vbridge.commands import listing, live
from vbridge.localcluster import certs as cluster_certs
from vbridge.localcluster import cluster, depcrds
from vbridge.nodesim import nodes, simulator
from webhooks import server

__all__ = ["ROOT", "SEEDS", "SEED_CRDS", "SEED_NAMESPACE", "WITH_OPERATORS", "Options", "run", "seed"]

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Which upstream CRD sets the seed examples need. MPIJob v1 (training-operator) is chosen over
# v2beta1: the seed MPIJob v1alpha2 converts to v1 (the behaviour-preserving target).
SEED_CRDS = ("spark-operator", "training-operator", "training-operator-mpi")
# `vbridge up --with-operators`: the operators whose CRDs can share one cluster (the training-operator
# serves MPIJob v1, so the mpi-operator, which serves v2beta1 under the same CRD name, is left out).
WITH_OPERATORS = ("spark-operator", "training-operator")
SEED_NAMESPACE = "seed"
SEEDS = (
    "volcano-job-mpi.yaml",
    "volcano-job-tensorflow.yaml",
    "sparkapplication-pi-volcano.yaml",
    "tfjob-v1alpha1.yaml",
    "mpijob-v1alpha2.yaml",
)


@dataclasses.dataclass(frozen=True)
class Options:
    specs: tuple[nodes.NodeSpec, ...]
    run_seconds: float | None = 30.0
    examples: bool = True
    scheduler_name: str = defaults.SCHEDULER_NAME
    operators: tuple[str, ...] = ()  # the upstream operators running beside us (--with-operators)
    tty: bool | None = None  # redraw the table in place (default: whether stdout is a terminal)
    backend: str = defaults.BACKEND  # native: kube-scheduler places the gangs (started by the caller)


async def _apply(api: client.Client, doc: dict[str, Any], namespace: str) -> str:
    doc, _ = convert.to_current(doc)
    group_version, kind = doc["apiVersion"], doc["kind"]
    plural = kind.lower() + "s"
    doc["metadata"] = {**doc.get("metadata", {}), "namespace": namespace}
    where = f"{kind} {namespace}/{doc['metadata'].get('name')}"
    try:
        await api.request("POST", paths.resource(group_version, plural, namespace=namespace), body=doc)
        return f"created {where}"
    except errors.ApiError as exc:
        if exc.status == 409:  # a reused --workdir keeps etcd: the seed is there from the last run
            return f"kept {where} (it exists from an earlier run)"
        return f"not created: {where}: {exc.message}"


async def run(lc: cluster.LocalCluster, opts: Options, say: Callable[[str], None]) -> None:
    """Serve until cancelled (``vbridge up``: by SIGINT or SIGTERM, ``vbridge.commands.interrupts``)."""
    pki = cluster_certs.KeyPair(cert=lc.workdir / "pki" / "ca.crt", key=lc.workdir / "pki" / "ca.key")
    tls = cluster_certs.issue_from(
        pki, lc.workdir / "webhook", "webhook", common_name="volcano-bridge", hosts=("127.0.0.1",)
    )
    port = cluster.free_port()
    settings = server.Settings(port=port, certfile=tls.cert, keyfile=tls.key, scheduler_name=opts.scheduler_name)
    async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=32) as api:
        tasks: list[asyncio.Task[None]] = []
        try:
            sim = simulator.Simulator(api, opts.specs, default_run_seconds=opts.run_seconds)
            await sim.register_nodes()
            say(f"{len(opts.specs)} simulated nodes are Ready.")
            tasks.append(asyncio.create_task(sim.serve()))
            bridge = runtime.Bridge(api, settings, backend=opts.backend)
            tasks.append(asyncio.create_task(bridge.run()))
            while not bridge.started.is_set():
                _raise_if_failed(tasks)
                await asyncio.sleep(0.05)
            await runtime.register(
                api,
                url=f"https://127.0.0.1:{port}",
                ca_bundle=pki.cert.read_bytes(),
                scheduler_name=opts.scheduler_name,
                backend=bridge.facts.backend,
            )
            say(f"admission webhook on https://127.0.0.1:{port} (MutatingWebhookConfiguration {runtime.NAME})")
            if bridge.facts.backend == defaults.NATIVE:
                # Our scheduler keeps only its queue half: it admits groups and lifts their pods'
                # queue gate; kube-scheduler (started by the caller) places them.
                conf = configure.parse("", backend=defaults.NATIVE)
                tasks.append(asyncio.create_task(loop.Scheduler(api, conf).run()))
                say(f"backend native: kube-scheduler places the gangs; our queues lift the gate {keys.QUEUE_GATE}")
            else:
                conf = configure.parse("", scheduler_name=opts.scheduler_name)
                tasks.append(asyncio.create_task(loop.Scheduler(api, conf).run()))
                say(f"gang scheduler running for schedulerName {opts.scheduler_name!r}")
            if opts.examples:
                await seed(api, say)
            tty = sys.stdout.isatty() if opts.tty is None else opts.tty
            width = shutil.get_terminal_size().columns if tty else 0
            view = live.Live(tty=tty, operators=opts.operators, width=width)
            while True:
                _raise_if_failed(tasks)
                await asyncio.sleep(3)
                if opts.examples:
                    text = view.update(await listing.collect(api, None), datetime.datetime.now())
                    if text:
                        say(text)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # On a signal the control plane is stopping too (``vbridge up``): it may not answer.
            with contextlib.suppress(errors.BridgeError, *client.TRANSPORT_ERRORS):
                await runtime.unregister(api)


def _raise_if_failed(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


async def seed(api: client.Client, say: Callable[[str], None], namespace: str = SEED_NAMESPACE) -> None:
    """The upstream CRDs and the seed examples in ``namespace``; what exists already is kept."""
    docs: list[dict[str, Any]] = []
    for name in SEED_CRDS:
        try:
            for path in depcrds.ensure(name, ROOT / ".cache" / "dep-crds"):
                docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
        except errors.BridgeError as exc:
            say(f"upstream CRDs {name} unavailable ({exc}); its examples are skipped")
    await cluster.apply_crds(api, docs)
    await cluster.ensure_namespace(api, namespace)
    for name in SEEDS:
        for doc in yaml.safe_load_all((ROOT / "examples" / name).read_text()):
            if doc:
                say("  " + await _apply(api, doc, namespace))
