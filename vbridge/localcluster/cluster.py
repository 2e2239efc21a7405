"""LocalCluster: etcd + kube-apiserver + kube-controller-manager on loopback.

    with cluster.LocalCluster(workdir) as lc:
        print(lc.kubeconfig)

Ports are free loopback ports unless given. ``stop`` kills every process even after a failed
start; children also die with us (parent-death signal), so a crashed test leaves no orphans.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import pathlib
import shutil
import socket
import tempfile
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import yaml

from bridge import crdgen, defaults, errors, gates
from bridge.k8s import client, kubeconfigs, paths, writes
from vbridge.localcluster import binaries, processes
from vbridge.localcluster import certs as cluster_certs
from vbridge.localcluster import probes as http_probes

__all__ = [
    "NATIVE_APISERVER_FLAGS",
    "NATIVE_GATES",
    "LocalCluster",
    "Ports",
    "apply_crds",
    "claim",
    "ensure",
    "ensure_namespace",
    "free_port",
    "guard_gates",
    "run_sync",
]

T = TypeVar("T")

# As Volcano's scheduler does at start-up: `root` (not reclaimable) and `default` (reclaimable).
# Controllers a simulated cluster must not run: node lifecycle would taint and evict nodes that
# have no kubelet; node IPAM and attach/detach have nothing to manage. (1.37's controller manager
# no longer carries the cloud controllers.)
_KCM_OFF = ("node-lifecycle-controller", "node-ipam-controller", "persistentvolume-attach-detach-controller")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ready(conn: kubeconfigs.Connection) -> bool:
    return http_probes.http_ok(conn.server + "/readyz", verify=conn.ssl_context(), timeout=2.0)


def claim(port: int | None, what: str) -> int:
    """``port`` if it is free to listen on (``None``: any free one). SO_REUSEADDR, as the servers
    that will listen there set it: a port left in TIME_WAIT by a run just stopped is free."""
    if port is None:
        return free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            raise errors.PortInUseError(f"{what} port {port} on 127.0.0.1 is taken: {exc.strerror}") from exc
    return port


@dataclasses.dataclass(frozen=True)
class Ports:
    apiserver: int | None = None
    etcd: int | None = None


# Kubernetes 1.37's gang scheduling is beta and off by default: these turn it on.
NATIVE_GATES = "--feature-gates=GenericWorkload=true"
NATIVE_APISERVER_FLAGS = (NATIVE_GATES, "--runtime-config=scheduling.k8s.io/v1beta1=true")


class LocalCluster(processes.Started):
    def __init__(
        self,
        workdir: pathlib.Path | None = None,
        *,
        bins: binaries.Binaries | None = None,
        ports: Ports = Ports(),
        extra_crds: tuple[pathlib.Path, ...] = (),
        start_timeout: float = 60.0,
        endpoint_routing: bool = False,
        native_gangs: bool = False,
        gate_policy: bool = True,
        audit_rules: tuple[dict[str, Any], ...] = (),
    ) -> None:
        self._own_workdir = workdir is None
        # True: the apiserver reaches webhook (and aggregated API) Services through their
        # endpoints (--enable-aggregator-routing), as pods of a Service need with no kube-proxy
        # here; False keeps the ClusterIP/ExternalName resolution the operators' webhooks use.
        self.endpoint_routing = endpoint_routing
        # True: Kubernetes' own gang scheduling (the Workload API, scheduling.k8s.io/v1beta1) is
        # served and its controllers run: the GenericWorkload gate on the apiserver and the
        # controller manager (and on the kube-scheduler that places such pods, see NATIVE_GATES).
        self.native_gangs = native_gangs
        # True: the policy that keeps our scheduling gates ours (bridge.gates) is in force from the
        # start, as the chart installs it; False for tests that install the chart's own copy.
        self.gate_policy = gate_policy
        # The apiserver's audit policy rules (audit.k8s.io/v1); none: no audit log. The log (JSON
        # lines, no RequestReceived stage) is ``audit_log``.
        self.audit_rules = audit_rules
        self.workdir = workdir or pathlib.Path(tempfile.mkdtemp(prefix="vbridge-cluster-"))
        self.audit_log = self.workdir / "logs" / "audit.log"
        self.bins = bins
        self.ports = ports
        self.extra_crds = extra_crds
        self.start_timeout = start_timeout
        self.kubeconfig = self.workdir / "kubeconfig"
        self.server = ""
        self.procs: list[processes.Process] = []
        self.timings: dict[str, float] = {}  # seconds from start() to: apiserver ready, all ready
        self._t0 = 0.0

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start everything; on any failure stop what was started and re-raise."""
        self._t0 = time.monotonic()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        self.timings["ready"] = time.monotonic() - self._t0

    def _start(self) -> None:
        bins = self.bins or binaries.ensure()
        api_port = claim(self.ports.apiserver, "kube-apiserver")
        etcd_port = claim(self.ports.etcd, "etcd")
        peer_port = free_port()
        pki = cluster_certs.make_pki(self.workdir / "pki")
        logs = self.workdir / "logs"
        self.server = f"https://127.0.0.1:{api_port}"
        kubeconfigs.write(self.kubeconfig, server=self.server, ca=pki.ca.cert, cert=pki.admin.cert, key=pki.admin.key)

        etcd_url = f"http://127.0.0.1:{etcd_port}"
        etcd = processes.Process(
            "etcd",
            [
                str(bins.path("etcd")),
                "--name=vbridge",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=vbridge=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync=true",
                "--log-level=warn",
                "--quota-backend-bytes=8589934592",
            ],
            log=logs / "etcd.log",
        )
        self._run(etcd)
        self._wait(etcd, "etcd", lambda: http_probes.http_ok(f"{etcd_url}/health"))

        # A port found free can be taken before the apiserver listens on it (the ephemeral range
        # is shared with outgoing connections): a chosen port is tried again, at most 3 times.
        for attempt in range(3):
            apiserver = self._apiserver(bins, pki, etcd_url, api_port, logs)
            try:
                self._run(apiserver)
                conn = kubeconfigs.load(self.kubeconfig)
                self._wait(
                    apiserver,
                    "kube-apiserver",
                    functools.partial(_ready, conn),
                )
                break
            except errors.StartupError as exc:
                if self.ports.apiserver is not None or attempt == 2 or "address already in use" not in exc.log_tail:
                    raise
                apiserver.stop()
                self.procs.remove(apiserver)
                api_port = free_port()
                self.server = f"https://127.0.0.1:{api_port}"
                kubeconfigs.write(
                    self.kubeconfig, server=self.server, ca=pki.ca.cert, cert=pki.admin.cert, key=pki.admin.key
                )
        self.timings["apiserver"] = time.monotonic() - self._t0

        kcm = processes.Process(
            "kube-controller-manager",
            [
                str(bins.path("kube-controller-manager")),
                f"--kubeconfig={self.kubeconfig}",
                "--leader-elect=false",
                "--secure-port=0",
                f"--controllers=*,{','.join('-' + c for c in _KCM_OFF)}",
                f"--service-account-private-key-file={pki.sa_private}",
                f"--root-ca-file={pki.ca.cert}",
                "--use-service-account-credentials=false",
                "--cluster-cidr=10.244.0.0/16",
                "--kube-api-qps=500",
                "--kube-api-burst=1000",
                "-v=1",
                *((NATIVE_GATES,) if self.native_gangs else ()),
            ],
            log=logs / "kube-controller-manager.log",
        )
        self._run(kcm)
        run_sync(self._bootstrap(conn))
        kcm.check_alive()

    def _apiserver(
        self, bins: binaries.Binaries, pki: cluster_certs.Pki, etcd_url: str, api_port: int, logs: pathlib.Path
    ) -> processes.Process:
        return processes.Process(
            "kube-apiserver",
            [
                str(bins.path("kube-apiserver")),
                f"--etcd-servers={etcd_url}",
                f"--cert-dir={self.workdir / 'pki'}",
                f"--secure-port={api_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--authorization-mode=RBAC",
                "--endpoint-reconciler-type=none",
                f"--enable-aggregator-routing={'true' if self.endpoint_routing else 'false'}",
                "--allow-privileged=true",
                "--disable-admission-plugins=ServiceAccount",
                f"--service-account-issuer={self.server}/",
                f"--service-account-key-file={pki.sa_public}",
                f"--service-account-signing-key-file={pki.sa_private}",
                f"--client-ca-file={pki.ca.cert}",
                f"--tls-cert-file={pki.serving.cert}",
                f"--tls-private-key-file={pki.serving.key}",
                "--max-requests-inflight=2000",
                "--max-mutating-requests-inflight=1000",
                "--enable-priority-and-fairness=false",
                "--event-ttl=15m",
                "-v=1",
                *(NATIVE_APISERVER_FLAGS if self.native_gangs else ()),
                *self._audit_flags(),
            ],
            log=logs / "kube-apiserver.log",
        )

    def _audit_flags(self) -> list[str]:
        if not self.audit_rules:
            return []
        policy = self.workdir / "audit-policy.yaml"
        body = {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"]}
        policy.write_text(yaml.safe_dump({**body, "rules": list(self.audit_rules)}))
        return [
            f"--audit-policy-file={policy}",
            f"--audit-log-path={self.audit_log}",
            "--audit-log-format=json",
            "--audit-log-maxsize=0",
        ]

    def _run(self, proc: processes.Process) -> None:
        self.procs.append(proc)
        proc.start()

    def _wait(self, proc: processes.Process, what: str, ready: Any) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            proc.check_alive()
            if ready():
                return
            time.sleep(0.1)
        raise errors.StartupError(
            f"{what} did not become ready within {self.start_timeout:.0f} s", log_tail=proc.tail()
        )

    async def _bootstrap(self, conn: kubeconfigs.Connection) -> None:
        """Our CRDs (and any extra ones), the scheduling-gate policy, then the default queues."""
        documents = [crdgen.manifest(info) for info in crdgen.ALL]
        for path in self.extra_crds:
            documents += [d for d in yaml.safe_load_all(path.read_text()) if d]
        async with client.Client(conn) as api:
            await apply_crds(api, documents)
            if self.gate_policy:
                await guard_gates(api)
            queues = paths.resource(defaults.QUEUE_API, "queues")
            for body in defaults.default_queue_objects():
                with contextlib.suppress(errors.ApiError):
                    await api.request("POST", queues, body=body)
                name = body["metadata"]["name"]
                with contextlib.suppress(errors.ApiError):
                    await api.request(
                        "PATCH",
                        f"{queues}/{name}/status",
                        body={"status": {"state": "Open"}},
                        content_type=client.MERGE,
                    )

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()
        self.procs.clear()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def logs(self) -> dict[str, str]:
        return {p.name: p.tail(40) for p in self.procs}


async def ensure(api: client.Client, path: str, body: dict[str, Any]) -> None:
    """Create ``body`` at ``path`` unless it exists (409)."""
    try:
        await api.request("POST", path, body=body)
    except errors.ApiError as exc:
        if exc.status != 409:
            raise


async def ensure_namespace(api: client.Client, namespace: str, *objects: tuple[str, dict[str, Any]]) -> None:
    """Create ``namespace``, then in it each core (v1) object given as (plural, body), unless they exist."""
    namespace_body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    await ensure(api, paths.resource("v1", "namespaces"), namespace_body)
    for plural, body in objects:
        await ensure(api, paths.resource("v1", plural, namespace=namespace), body)


async def apply_crds(api: client.Client, documents: list[dict[str, Any]], timeout: float = 30.0) -> None:
    """Create or replace CRDs, then wait until each is Established."""
    base = paths.resource("apiextensions.k8s.io/v1", "customresourcedefinitions")
    for doc in documents:
        await writes.create_or_replace(api, base, doc)
    deadline = time.monotonic() + timeout
    for doc in documents:
        name = doc["metadata"]["name"]
        while True:
            crd = await api.request("GET", f"{base}/{name}")
            conds = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
            if conds.get("Established") == "True":
                break
            if time.monotonic() > deadline:
                raise errors.StartupError(f"CRD {name} not Established after {timeout:.0f} s")
            await asyncio.sleep(0.1)


async def guard_gates(api: client.Client, timeout: float = 30.0) -> None:
    """The policy and binding of ``bridge.gates``, created or replaced; returns once the apiserver
    type-checked the policy, and raises StartupError if it found an expression wrong."""
    base = paths.resource(gates.API, "validatingadmissionpolicies")
    policy, binding = gates.objects()
    await writes.create_or_replace(api, base, policy)
    await writes.create_or_replace(api, paths.resource(gates.API, "validatingadmissionpolicybindings"), binding)
    deadline = time.monotonic() + timeout
    while True:
        current = await api.request("GET", f"{base}/{gates.LOCAL_NAME}")
        status = current.get("status") or {}
        if status.get("observedGeneration") == current["metadata"].get("generation"):
            warnings = (status.get("typeChecking") or {}).get("expressionWarnings") or []
            if warnings:
                raise errors.StartupError(f"the scheduling-gate policy does not type-check: {warnings}")
            return
        if time.monotonic() > deadline:
            raise errors.StartupError(f"the scheduling-gate policy was not type-checked within {timeout:.0f} s")
        await asyncio.sleep(0.1)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion, also when the caller is itself inside an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
