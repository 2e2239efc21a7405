"""The chart installed beside Volcano's own components (``tests/integration/test_helm_beside_volcano.py``).

- ``running``: the helm test bed (``helminstall.BareCluster``, runtime nodes in network
  namespaces for the chart's pods, kube-scheduler for them, plain simulated nodes for the
  workloads) plus Volcano's vc-scheduler and vc-controller-manager with Volcano's CRDs
  (``vbridge.localcluster.volcano``) and the three real operators; the audit log covers our
  ServiceAccounts and those of Volcano and the operators;
- ``Recorder``: every PodGroup phase and the moment each pod of the workload namespace was
  bound, as the watch brings them (a phase held for less than a poll is still seen);
- ``bound_by`` and ``binders``: who bound a pod, from its ``Scheduled`` event and from the
  audit log's ``pods/binding`` creates.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import pathlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from bridge import errors
from bridge.k8s import client, kubeconfigs, paths, watching
from tests.support import apiserver, helmbed, helminstall, loopthread, netns, operator_env, runtimesim
from vbridge.localcluster import binaries, kubescheduler, operators, volcano
from vbridge.nodesim import nodes

WORK = "work"
RUNTIME_NODES = ("sim-run-0", "sim-run-1")  # two of each chart component, one per node
PLAIN_NODES = tuple(f"sim-node-{i}" for i in range(3))
NODE_CPU = "8"
RUN_SECONDS = 8.0  # the workloads' pods run this long on the plain nodes, then succeed
AUDITED = (helmbed.NS, operators.SYSTEM_NAMESPACE)  # ours; Volcano's and the operators' accounts


def values(*, external: bool = True) -> dict[str, Any]:
    """The helm bed's values (our image, on the runtime nodes) in the beside-Volcano mode, or
    (``external=False``) standalone."""
    out = helmbed.values()
    if not external:
        return out
    del out["scheduler"]  # no scheduler in this mode: its placement values would be unused
    return {**out, "volcano": {"external": True}}


def volcano_folder() -> pathlib.Path:
    """What tools/build-volcano.sh built; missing: skip, or fail under CI=true when tools/dev builds it."""
    try:
        return volcano.find()
    except errors.BinaryMissingError as exc:
        dev = helmbed.ROOT / "tools" / "dev"
        if os.environ.get("CI") == "true" and "build-volcano.sh" in dev.read_text():
            raise
        pytest.skip(str(exc))


@dataclasses.dataclass
class Beside:
    bed: helmbed.Bed
    volcano: volcano.Volcano  # standalone (``running(external=False)``): none, this is None
    operators: dict[str, operators.Operator]
    recorder: Recorder

    def operators_tail(self, lines: int = 15) -> str:
        return "\n".join(f"--- {name}\n{op.tail(lines)}" for name, op in self.operators.items())

    def tail(self) -> str:
        """The operators' last log lines, and Volcano's when it runs."""
        return f"{self.operators_tail()}\n{self.volcano.tail() if self.volcano else ''}"


@contextlib.contextmanager
def running(bins: binaries.Binaries, work: pathlib.Path, *, external: bool = True) -> Iterator[Beside]:
    """The bed, Volcano's components and the operators; ``external=False``: the same bed and
    operators without Volcano, for the chart's standalone install (its CRDs, our scheduler)."""
    if os.geteuid() != 0:
        pytest.skip("network and mount namespaces need root")
    if "helm" not in bins.extras:
        pytest.skip("helm not built (tools/build-binaries.sh)")
    folder = volcano_folder() if external else None
    names = ("training-operator", "mpi-operator", "spark-operator")
    built = {name: operator_env.operator_binary(name) for name in names}
    spark = operator_env.spark_home()
    lc = helminstall.BareCluster(work / "cluster", bins=bins, audited=AUDITED)
    with contextlib.ExitStack() as stack:
        stack.enter_context(apiserver.started(lc))
        nets = []
        for i in range(len(RUNTIME_NODES)):
            nets.append(netns.NodeNetwork.create(f"v{i}"))
            stack.callback(nets[-1].delete)
        specs = [nodes.NodeSpec(n, cpu="4", memory="16Gi", taints=(helmbed.TAINT,)) for n in RUNTIME_NODES]
        specs += [nodes.NodeSpec(n, cpu=NODE_CPU, memory="32Gi") for n in PLAIN_NODES]
        sim = runtimesim.RuntimeSimThread(
            lc.kubeconfig,
            specs,
            workdir=work / "kubelet",
            nets={n: net.node_net() for n, net in zip(RUNTIME_NODES, nets, strict=True)},
            default_run_seconds=RUN_SECONDS,
        ).start()
        stack.callback(sim.stop)
        stack.callback(kubescheduler.start(lc, bins).stop)
        keeper = helminstall.LogKeeper(work / "kubelet", work / "pod-logs").start()
        stack.callback(keeper.stop)
        vc = stack.enter_context(volcano.Volcano(lc, folder=folder)) if folder else None
        # TFJob only: the training-operator's MPIJob v1 CRD has the name of mpi-operator's v2beta1 one.
        ops = {
            "training-operator": operators.Operator(
                "training-operator", lc, binary=built["training-operator"], schemes=("tfjob",)
            ),
            "mpi-operator": operators.Operator("mpi-operator", lc, binary=built["mpi-operator"]),
            "spark-operator": operators.Operator("spark-operator", lc, binary=built["spark-operator"], spark=spark),
        }
        for op in ops.values():
            stack.enter_context(op)
        path = work / "values.yaml"
        path.write_text(yaml.safe_dump(values(external=external)))
        api = stack.enter_context(apiserver.client_of(lc))
        recorder = Recorder(lc.kubeconfig, WORK)
        stack.callback(recorder.stop_if_started)
        if external:  # Volcano's CRDs are there; standalone, the test starts it once the chart brought ours
            recorder.start()
        bed = helmbed.Bed(lc, bins, api, sim, helminstall.Helm(bins.path("helm"), lc), keeper, path)
        yield Beside(bed, vc, ops, recorder)  # type: ignore[arg-type]  # None: standalone


@dataclasses.dataclass(frozen=True)
class Bind:
    at: float  # time.monotonic() when the watch brought the pod with its node
    node: str
    pod: dict[str, Any]  # the pod as it was then


class Recorder(loopthread.LoopThread):
    """What the watch shows in ``namespace``, kept after the objects are gone: each PodGroup as
    first seen and its phases (in order, each change once), and the first bind of each pod."""

    def __init__(self, kubeconfig: pathlib.Path, namespace: str) -> None:
        self._lock = threading.Lock()
        self._groups: dict[str, dict[str, Any]] = {}
        self._phases: dict[str, list[str]] = {}
        self._binds: dict[str, Bind] = {}
        conn = kubeconfigs.load(kubeconfig)

        def on_group(kind: str, obj: dict[str, Any]) -> None:
            name, phase = obj["metadata"]["name"], (obj.get("status") or {}).get("phase") or "(none)"
            with self._lock:
                self._groups.setdefault(name, obj)
                seen = self._phases.setdefault(name, [])
                if kind != "DELETED" and (not seen or seen[-1] != phase):
                    seen.append(phase)

        def on_pod(kind: str, obj: dict[str, Any]) -> None:
            node = obj["spec"].get("nodeName")
            with self._lock:
                if node and obj["metadata"]["name"] not in self._binds:
                    self._binds[obj["metadata"]["name"]] = Bind(time.monotonic(), node, obj)

        async def main(ready: asyncio.Event) -> None:
            async with client.Client(conn) as api:
                synced = [asyncio.Event(), asyncio.Event()]
                groups = paths.resource("scheduling.volcano.sh/v1beta1", "podgroups", namespace=namespace)
                pods = paths.resource("v1", "pods", namespace=namespace)
                follows = [
                    asyncio.create_task(watching.follow(api, groups, on_group, on_synced=synced[0].set)),
                    asyncio.create_task(watching.follow(api, pods, on_pod, on_synced=synced[1].set)),
                ]
                await asyncio.gather(*(s.wait() for s in synced))
                ready.set()
                await asyncio.gather(*follows)

        super().__init__(main, "recorder")

    def start(self, timeout: float = 60) -> Recorder:
        super().start(timeout)
        return self

    def stop_if_started(self) -> None:
        if self._thread.ident is not None:
            self.stop()

    def group(self, name: str) -> dict[str, Any] | None:
        """The PodGroup as first seen, also after it was deleted."""
        with self._lock:
            return self._groups.get(name)

    def phases(self, group: str) -> list[str]:
        with self._lock:
            return list(self._phases.get(group, []))

    def binds(self, labels: dict[str, str]) -> dict[str, Bind]:
        """Pod name -> its first bind, for the pods carrying every one of ``labels``."""
        with self._lock:
            found = self._binds.items()
            return {n: b for n, b in found if labels.items() <= (b.pod["metadata"].get("labels") or {}).items()}

    def all_bound(self, labels: dict[str, str], count: int) -> dict[str, Bind] | None:
        """``binds(labels)`` once ``count`` pods are bound, else None."""
        found = self.binds(labels)
        return found if len(found) >= count else None


def bound_by(api: k8s.ApiClient, namespace: str) -> dict[str, set[str]]:
    """Pod -> the components that reported its ``Scheduled`` event (reportingComponent, else source)."""
    out: dict[str, set[str]] = {}
    for e in k8s.CoreV1Api(api).list_namespaced_event(namespace, field_selector="reason=Scheduled").items:
        who = e.reporting_component or (e.source.component if e.source else "") or "?"
        out.setdefault(e.involved_object.name, set()).add(who)
    return out


def binders(lc: helminstall.BareCluster, namespace: str) -> dict[str, set[str]]:
    """Pod -> the audited users whose ``pods/binding`` create for it the apiserver answered 201."""
    return creators(lc, namespace, "pods", "binding")


def creators(lc: helminstall.BareCluster, namespace: str, resource: str, subresource: str = "") -> dict[str, set[str]]:
    """Name -> the audited users whose create of ``resource`` (``subresource``) the apiserver answered 201."""
    out: dict[str, set[str]] = {}
    for e in helminstall.audit_events(lc):
        ref = e.get("objectRef") or {}
        what = (ref.get("resource"), ref.get("subresource") or "", ref.get("namespace"), e.get("verb"))
        if what == (resource, subresource, namespace, "create") and (e.get("responseStatus") or {}).get("code") == 201:
            out.setdefault(ref.get("name", ""), set()).add(e["user"]["username"])
    return out


def table(rows: list[dict[str, str]]) -> str:
    """Rows as an aligned text table, the keys of the first row as the header."""
    header = list(rows[0])
    widths = [max(len(h), *(len(r[h]) for r in rows)) for h in header]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(r[h].ljust(w) for h, w in zip(header, widths, strict=True)) for r in rows]
    return "\n".join(lines)
