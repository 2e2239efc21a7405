"""Upstream operators (spark-operator, training-operator v1, mpi-operator) as child processes.

    with operators.Operator("spark-operator", lc) as op:
        ...  # SparkApplications in lc are now submitted by the real operator

Each operator is the binary ``tools/build-operators.sh`` built from its pinned Go module. It runs
out of cluster against a ``LocalCluster`` with its default flags (no gang-scheduler or
batch-scheduler flag: the bridge is what makes the gang). Only what running outside a pod needs
is changed: loopback ports for its probes, and what the pod's environment would give it
(namespace, mounted webhook certificates, ``KUBERNETES_SERVICE_HOST``, ``SPARK_HOME``).

The operators authenticate with a ServiceAccount token (cluster-admin), not the admin client
certificate: spark-submit's fabric8 client cannot read the local cluster's EC PKCS#8 key, and a
token is also what the operators use in a real cluster.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import pathlib
import subprocess
import time
from typing import Any

import yaml

from bridge import errors
from bridge.k8s import client, kubeconfigs, paths
from vbridge.localcluster import binaries, cluster, depcrds, processes, trainingwebhook
from vbridge.localcluster import probes as http_probes

__all__ = [
    "MPI_HEALTH_PORT",
    "OPERATORS",
    "SYSTEM_NAMESPACE",
    "Operator",
    "Spec",
    "find",
    "install_crds",
    "of_schemes",
    "spark_home",
    "spark_version",
    "token_kubeconfig",
]


@dataclasses.dataclass(frozen=True)
class Spec:
    binary: str
    crd_sets: tuple[str, ...]
    # CRDs the operator's manager needs beyond depcrds' sets, read from the module (set, path).
    more_crds: tuple[tuple[str, str], ...] = ()


OPERATORS: dict[str, Spec] = {
    # v2.5.2's controller exits at start-up without the SparkConnect CRD (it registers a controller
    # for it): depcrds' "spark-operator" set holds it, as every kind we admit.
    "spark-operator": Spec("spark-operator", ("spark-operator",)),
    # The training-operator serves MPIJob v1; mpi-operator's v2beta1 CRD has the same name, so the
    # two never share a cluster. With its default flags it runs a controller for every kind it
    # knows, and exits when one cannot start for lack of its CRD (seen for XGBoostJob under load):
    # depcrds' "training-operator" set holds the CRD of every other kind it serves.
    "training-operator": Spec("training-operator", ("training-operator", "training-operator-mpi")),
    "mpi-operator": Spec("mpi-operator", ("mpi-operator",)),
}
SYSTEM_NAMESPACE = "vbridge-operators"
# mpi-operator v0.8.2 serves /healthz on this fixed port (cmd/mpi-operator/app/server.go).
MPI_HEALTH_PORT = 8080


def find(name: str, *, build: bool = False) -> pathlib.Path:
    """The operator's binary from ``.cache/bin`` (built by tools/build-operators.sh)."""
    root = binaries.repo_root()
    if root is None:
        raise errors.BinaryMissingError(f"{name}: not running from a volcano-bridge checkout")
    env = dict(os.environ)
    if not build:
        env["VBRIDGE_NO_BUILD"] = "1"
    script = root / "tools" / "build-operators.sh"
    proc = subprocess.run(["bash", str(script), name], capture_output=True, text=True, env=env, check=False)
    sets = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    if name not in sets:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise errors.BinaryMissingError(f"{name} is not built ({tail[0]}); run tools/build-operators.sh {name}")
    return pathlib.Path(sets[name]) / OPERATORS[name].binary


def spark_home() -> pathlib.Path | None:
    """``SPARK_HOME``, else the pyspark installed next to us (it ships bin/spark-submit and the jars)."""
    env = os.environ.get("SPARK_HOME")
    if env and (pathlib.Path(env) / "bin" / "spark-submit").exists():
        return pathlib.Path(env)
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    home = pathlib.Path(spec.origin).parent
    return home if (home / "bin" / "spark-submit").exists() else None


def spark_version(home: pathlib.Path) -> str:
    """The pyspark version of a Spark home (pyspark's version.py), or "" when it is not pyspark's."""
    text = (home / "version.py").read_text() if (home / "version.py").exists() else ""
    for line in text.splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    return ""


def token_kubeconfig(
    lc: cluster.LocalCluster, path: pathlib.Path, *, account: str = "vbridge-operators"
) -> pathlib.Path:
    """A kubeconfig with a cluster-admin ServiceAccount token (see the module docstring for why)."""

    async def go() -> str:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
            await cluster.ensure_namespace(
                api,
                SYSTEM_NAMESPACE,
                ("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}}),
            )
            await cluster.ensure(
                api,
                paths.resource("rbac.authorization.k8s.io/v1", "clusterrolebindings"),
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": account},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": "cluster-admin",
                    },
                    "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": SYSTEM_NAMESPACE}],
                },
            )
            sa = paths.resource("v1", "serviceaccounts", namespace=SYSTEM_NAMESPACE, name=account)
            review = await api.request(
                "POST",
                f"{sa}/token",
                body={
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenRequest",
                    "spec": {"expirationSeconds": 86400},
                },
            )
            return str(review["status"]["token"])

    token = cluster.run_sync(go())
    body = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "vbridge",
                "cluster": {"server": lc.server, "certificate-authority": str(lc.workdir / "pki" / "ca.crt")},
            }
        ],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": "vbridge", "context": {"cluster": "vbridge", "user": account}}],
        "current-context": "vbridge",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    path.chmod(0o600)
    return path


def of_schemes(crds: list[dict[str, Any]], schemes: tuple[str, ...]) -> list[dict[str, Any]]:
    """The CRDs of the kinds ``schemes`` names (``tfjob`` → ``tfjobs``); all when empty."""
    if not schemes:
        return crds
    plurals = {f"{s.lower()}s" for s in schemes}
    return [d for d in crds if d["spec"]["names"]["plural"] in plurals]


def install_crds(lc: cluster.LocalCluster, name: str, cache: pathlib.Path, *, schemes: tuple[str, ...] = ()) -> None:
    """The operator's CRDs; with ``schemes``, only the CRDs of those kinds (``tfjob`` → tfjobs)."""
    docs: list[dict[str, Any]] = []
    for crd_set in OPERATORS[name].crd_sets:
        for path in depcrds.ensure(crd_set, cache):
            docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    for crd_set, rel in OPERATORS[name].more_crds:
        module, version, _ = depcrds.SETS[crd_set]
        docs += [d for d in yaml.safe_load_all((depcrds.module_dir(module, version) / rel).read_text()) if d]
    docs = of_schemes(docs, schemes)

    async def go() -> None:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
            await cluster.apply_crds(api, docs)

    cluster.run_sync(go())


class Operator(processes.Started):
    """One upstream operator process against ``lc``; ``stop`` is idempotent."""

    def __init__(
        self,
        name: str,
        lc: cluster.LocalCluster,
        *,
        binary: pathlib.Path | None = None,
        spark: pathlib.Path | None = None,
        crd_cache: pathlib.Path | None = None,
        start_timeout: float = 90.0,
        schemes: tuple[str, ...] = (),
    ) -> None:
        if name not in OPERATORS:
            raise errors.ConfigError(f"unknown operator {name!r}; known: {', '.join(OPERATORS)}")
        self.name = name
        self.lc = lc
        self.binary = binary
        self.spark = spark
        root = binaries.repo_root()
        self.crd_cache = crd_cache or ((root / ".cache" / "dep-crds") if root else lc.workdir / "dep-crds")
        self.start_timeout = start_timeout
        # training-operator only: its --enable-scheme values (e.g. ("tfjob",)); empty: every kind.
        # Fewer kinds need fewer CRDs: without "mpijob" its MPIJob v1 CRD is not installed, so
        # mpi-operator's v2beta1 CRD of the same name can serve the same cluster.
        if schemes and name != "training-operator":
            raise errors.ConfigError(f"{name}: schemes are the training-operator's --enable-scheme")
        self.schemes = schemes
        self.workdir = lc.workdir / name
        self.proc: processes.Process | None = None
        self.probe = ""
        self.webhook_urls: list[str] = []

    def start(self) -> None:
        binary = self.binary or find(self.name)
        if not binary.exists():
            raise errors.BinaryMissingError(f"{self.name}: {binary} does not exist; run tools/build-operators.sh")
        install_crds(self.lc, self.name, self.crd_cache, schemes=self.schemes)
        kubeconfig = token_kubeconfig(self.lc, self.workdir / "kubeconfig")
        env = {"KUBECONFIG": str(kubeconfig)}
        if self.name == "spark-operator":
            args = self._spark_args(env)
        elif self.name == "training-operator":
            args = self._training_args(env)
        else:
            args = self._mpi_args()
        # Process hands our own environment on; env(1) adds the operator's variables and then
        # execs it, so the process group Process kills is still the operator's.
        argv = ["/usr/bin/env", *(f"{k}={v}" for k, v in env.items()), str(binary), *args]
        self.proc = processes.Process(self.name, argv, log=self.workdir / f"{self.name}.log")
        self.proc.start()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _spark_args(self, env: dict[str, str]) -> list[str]:
        home = self.spark or spark_home()
        if home is None:
            raise errors.BinaryMissingError("spark-operator needs spark-submit: pip install pyspark or set SPARK_HOME")
        # v2.5.2 runs "$SPARK_HOME/bin/spark-submit" and builds --master from the in-cluster
        # service variables (pkg/util.GetMasterURL), so both are set as a pod would have them.
        host, port = self.lc.server.removeprefix("https://").rsplit(":", 1)
        env.update(SPARK_HOME=str(home), KUBERNETES_SERVICE_HOST=host, KUBERNETES_SERVICE_PORT=port)
        self.probe = f"127.0.0.1:{cluster.free_port()}"
        # `controller start` only: the operator's webhook is a separate `webhook start` process
        # that needs in-cluster certificates; leader election is off by default.
        return ["controller", "start", f"--health-probe-bind-address={self.probe}", "--metrics-bind-address=0"]

    def _training_args(self, env: dict[str, str]) -> list[str]:
        webhook_port = cluster.free_port()
        self.webhook_urls = trainingwebhook.setup(
            self.lc, self.workdir, namespace=SYSTEM_NAMESPACE, port=webhook_port, schemes=self.schemes
        )
        env["MY_POD_NAMESPACE"] = SYSTEM_NAMESPACE
        env["TMPDIR"] = str(self.workdir / "tmp")
        self.probe = f"127.0.0.1:{cluster.free_port()}"
        return [
            f"--webhook-server-port={webhook_port}",
            f"--health-probe-bind-address={self.probe}",
            "--metrics-bind-address=0",
            *(f"--enable-scheme={s}" for s in self.schemes),
        ]

    def _mpi_args(self) -> list[str]:
        if http_probes.http_ok(f"http://127.0.0.1:{MPI_HEALTH_PORT}/healthz") or not http_probes.port_free(
            MPI_HEALTH_PORT
        ):
            raise errors.PortInUseError(
                f"mpi-operator v0.8.2 always serves /healthz on :{MPI_HEALTH_PORT}, which is taken"
            )
        self.probe = f"127.0.0.1:{MPI_HEALTH_PORT}"
        # Leader election is always on in mpi-operator; its Lease lives in --lock-namespace.
        return [f"--kubeConfig={self.workdir / 'kubeconfig'}", f"--lock-namespace={SYSTEM_NAMESPACE}"]

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + self.start_timeout
        mounted = self.name != "training-operator"
        path = "/readyz" if self.name == "training-operator" else "/healthz"
        while time.monotonic() < deadline:
            self.proc.check_alive()
            if not mounted:
                mounted = trainingwebhook.mount(self.lc, self.workdir, namespace=SYSTEM_NAMESPACE)
            elif http_probes.http_ok(f"http://{self.probe}{path}") and all(map(http_probes.routed, self.webhook_urls)):
                return
            time.sleep(0.2)
        raise errors.StartupError(
            f"{self.name} not ready within {self.start_timeout:.0f} s", log_tail=self.proc.tail(40)
        )

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None
        if self.name == "training-operator":
            trainingwebhook.clear(self.workdir)

    def tail(self, lines: int = 40) -> str:
        return self.proc.tail(lines) if self.proc else ""
