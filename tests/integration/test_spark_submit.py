"""The real spark-submit (pyspark's), cluster mode, against the test bed with our bridge.

No operator: spark-submit creates the driver pod and its conf ConfigMap itself. The driver never
runs (nodes are simulated and there is no image), so this proves admission: the driver pod our
webhook saw is stamped and gated, the PodGroup is sized from the conf Spark really wrote, and the
gate is lifted once the group is complete.

Also the shared helpers of the operator tests (``tests/integration/test_operators_*.py``).
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import errors
from bridge.adapters.spark import conf as sparkconf
from bridge.k8s import client, kubeconfigs
from tests.integration.test_controlplane import PG, eventually
from tests.support import bridgethread, gangcheck, loopthread, simthread
from vbridge.localcluster import cluster, operators

pytestmark = [pytest.mark.integration, pytest.mark.operators]
ROOT = pathlib.Path(__file__).resolve().parents[2]
GROUP_NAME = "scheduling.k8s.io/group-name"


def ci_builds_operators() -> bool:
    """Whether CI builds the operators: only then is a missing binary a failure under CI=true."""
    scripts = [ROOT / ".ci" / "run", ROOT / "tools" / "dev"]
    return any("build-operators.sh" in p.read_text() for p in scripts if p.exists())


def operator_binary(name: str) -> pathlib.Path:
    try:
        return operators.find(name)
    except errors.BinaryMissingError as exc:
        if os.environ.get("CI") == "true" and ci_builds_operators():
            raise
        pytest.skip(f"{exc}")


def spark_home() -> pathlib.Path:
    home = operators.spark_home()
    if home is None:
        pytest.skip("pyspark is not installed (.venv/bin/pip install 'pyspark==3.5.*') and SPARK_HOME is unset")
    return home


def podgroups(api: k8s.ApiClient, ns: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = k8s.CustomObjectsApi(api).list_namespaced_custom_object(*PG, ns, "podgroups")["items"]
    return items


def pods(api: k8s.ApiClient, ns: str, selector: str) -> list[dict[str, Any]]:
    listed = k8s.CoreV1Api(api).list_namespaced_pod(ns, label_selector=selector)
    out: list[dict[str, Any]] = api.sanitize_for_serialization(listed)["items"]
    return out


@pytest.fixture(scope="module")
def token_kubeconfig(control_plane: cluster.LocalCluster) -> pathlib.Path:
    return operators.token_kubeconfig(control_plane, control_plane.workdir / "spark-submit" / "kubeconfig")


@pytest.fixture(scope="module")
def home() -> Iterator[pathlib.Path]:
    yield spark_home()


def submit(
    home: pathlib.Path, server: str, kubeconfig: pathlib.Path, namespace: str, *confs: str
) -> subprocess.CompletedProcess[str]:
    argv = [
        str(home / "bin" / "spark-submit"),
        f"--master=k8s://{server}",
        "--deploy-mode=cluster",
        "--name=spark-pi",
        "--class=org.apache.spark.examples.SparkPi",
        f"--conf=spark.kubernetes.namespace={namespace}",
        "--conf=spark.kubernetes.container.image=apache/spark:3.5.9",
        "--conf=spark.kubernetes.scheduler.name=volcano",
        "--conf=spark.executor.instances=3",
        "--conf=spark.executor.memory=1g",
        "--conf=spark.executor.cores=2",
        # Cluster mode would otherwise wait for a driver that never runs here.
        "--conf=spark.kubernetes.submission.waitAppCompletion=false",
        *(f"--conf={c}" for c in confs),
        "local:///opt/spark/examples/jars/spark-examples.jar",
        "10",
    ]
    env = dict(os.environ, SPARK_HOME=str(home), KUBECONFIG=str(kubeconfig))
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=240, check=False)


def check_driver(api: k8s.ApiClient, namespace: str, home: pathlib.Path) -> dict[str, Any]:
    """The driver pod as our webhook left it, with the conf Spark really wrote; returns the PodGroup."""
    [driver] = pods(api, namespace, "spark-role=driver")
    meta, spec = driver["metadata"], driver["spec"]
    app_id = meta["labels"]["spark-app-selector"]
    assert app_id.startswith("spark-") and len(app_id) == 38
    assert meta["labels"]["spark-app-name"] == "spark-pi"
    assert meta["labels"]["spark-version"] == operators.spark_version(home)
    assert meta["annotations"][GROUP_NAME] == f"{app_id}-podgroup"
    assert spec["schedulerName"] == "volcano"
    # Spark's own driver arguments, with ours first: the driver makes its executors grouped.
    args = spec["containers"][0]["args"]
    assert args[:7] == [
        "driver",
        "--conf",
        f"spark.kubernetes.executor.annotation.{GROUP_NAME}={app_id}-podgroup",
        "--conf",
        "spark.kubernetes.executor.scheduler.name=volcano",
        "--conf",
        "spark.kubernetes.executor.label.vbridge.io/grouped=true",
    ]
    assert args[7] == "--properties-file"

    conf_map = sparkconf.conf_map_name(driver)
    assert conf_map is not None
    cm = k8s.CoreV1Api(api).read_namespaced_config_map(conf_map, namespace)
    conf = sparkconf.parse_properties(cm.data["spark.properties"])
    assert conf["spark.app.id"] == app_id and conf["spark.executor.instances"] == "3"

    def complete() -> list[dict[str, Any]] | None:
        found = podgroups(api, namespace)
        return found if found and found[0]["spec"].get("minResources") else None

    [pg] = eventually(complete, what="the driver's PodGroup, complete")
    assert pg["metadata"]["name"] == f"{app_id}-podgroup"
    # driver: 1 cpu, 1g + 384Mi; executors: 3 × (2 cpu, 1g + 384Mi), from the conf Spark wrote.
    assert pg["spec"]["minResources"] == {"cpu": "7", "memory": "5632Mi"}
    assert pg["spec"]["minMember"] == 1
    owner = pg["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Pod", meta["name"], meta["uid"])
    eventually(
        lambda: not pods(api, namespace, "spark-role=driver")[0]["spec"].get("schedulingGates"),
        what="the driver's gate to be lifted",
    )
    return pg


@pytest.mark.timeout(300)
def test_spark_submit_cluster_mode_driver_is_stamped_and_grouped_from_its_real_conf(
    control_plane: cluster.LocalCluster,
    bridge: bridgethread.BridgeThread,
    api_client: k8s.ApiClient,
    namespace: str,
    home: pathlib.Path,
    token_kubeconfig: pathlib.Path,
) -> None:
    done = submit(home, control_plane.server, token_kubeconfig, namespace)
    assert done.returncode == 0, done.stderr[-3000:]
    pg = check_driver(api_client, namespace, home)
    assert pg["spec"]["queue"] == "default"


def spark4_home() -> pathlib.Path:
    """pyspark ≥ 4.2 (VolcanoFeatureStep in the standard build), from ``VBRIDGE_SPARK4_HOME`` or .cache."""
    env = os.environ.get("VBRIDGE_SPARK4_HOME")
    candidates = [pathlib.Path(env)] if env else []
    candidates += sorted((ROOT / ".cache").glob("pyspark4-venv/lib/python3*/site-packages/pyspark"))
    for home in candidates:
        if (home / "bin" / "spark-submit").exists() and operators.spark_version(home) >= "4.2":
            return home
    pytest.skip(
        "no pyspark ≥ 4.2: python -m venv .cache/pyspark4-venv && "
        ".cache/pyspark4-venv/bin/pip install 'pyspark>=4.2,<5'"
    )


@pytest.mark.timeout(300)
def test_spark_submit_volcano_feature_step_group_is_completed_not_replaced(
    control_plane: cluster.LocalCluster,
    bridge: bridgethread.BridgeThread,
    api_client: k8s.ApiClient,
    namespace: str,
    token_kubeconfig: pathlib.Path,
    tmp_path: pathlib.Path,
) -> None:
    home = spark4_home()
    template = tmp_path / "podgroup.yaml"
    template.write_text(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nspec:\n  priorityClassName: batch\n"
    )
    step = "org.apache.spark.deploy.k8s.features.VolcanoFeatureStep"
    done = submit(
        home,
        control_plane.server,
        token_kubeconfig,
        namespace,
        f"spark.kubernetes.driver.pod.featureSteps={step}",
        f"spark.kubernetes.executor.pod.featureSteps={step}",
        f"spark.kubernetes.scheduler.volcano.podGroupTemplateFile={template}",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # Spark made the group (a pre-resource, before the driver pod) from the template; we filled
    # in what it left out and kept what it set.
    pg = check_driver(api_client, namespace, home)
    assert pg["spec"]["priorityClassName"] == "batch"
    assert "vbridge.io/managed-by" not in (pg["metadata"].get("labels") or {})  # made by Spark


def eventually_bound(api: k8s.ApiClient, ns: str, selector: str, count: int) -> None:
    """All ``count`` pods bound to a node (pods the operator already cleaned up do not count), and
    each of their PodGroups bound as one gang: its first minMember binds in one scheduler cycle.

    The binds are those the ``Gang`` running against ``api`` recorded (see ``GANGS``).
    """
    gang = GANGS.get(api)
    assert gang is not None, (
        "eventually_bound needs a Gang running against this api client (Gang(lc, api)): "
        "it records the cycle in which each pod was bound"
    )
    seen: list[str] = []

    def bound() -> tuple[dict[str, gangcheck.Bind], dict[str, int]] | None:
        found = {f"{ns}/{p['metadata']['name']}": p for p in pods(api, ns, selector)}
        binds = gang.log.binds()
        seen[:] = [f"{k}: node {p['spec'].get('nodeName')}, {binds.get(k)}" for k, p in found.items()]
        # The scheduler reports a cycle after its binds landed: wait for the record, not only the node.
        if len(found) != count or not all(p["spec"].get("nodeName") and k in binds for k, p in found.items()):
            return None
        annotations = [p["metadata"].get("annotations") or {} for p in found.values()]
        groups = {f"{ns}/{a[GROUP_NAME]}" for a in annotations if GROUP_NAME in a}
        live = {f"{ns}/{pg['metadata']['name']}": pg for pg in podgroups(api, ns)}
        assert groups <= set(live), f"PodGroups {sorted(groups - set(live))} are gone before minMember was read"
        return binds, {g: int(live[g]["spec"].get("minMember", 1)) for g in groups}

    try:
        binds, min_members = eventually(bound, timeout=60, what=f"{count} pods ({selector}) to be bound")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last seen:\n  " + "\n  ".join(seen)) from None
    problems = gangcheck.split_gangs(binds, min_members)
    assert not problems, "\n".join([*problems, *(f"failed bind: {f}" for f in gang.log.failed())])


def scheduler_available() -> bool:
    """Whether our scheduler (scheduler/io) is in this checkout; the operator tests then bind pods."""
    return (ROOT / "scheduler" / "io" / "loop.py").exists()


class Gang:
    """Simulated nodes plus our scheduler (named volcano, as the stamps ask) on ``lc``, when we have it.

    Pods finish ``run_seconds`` after they start, so operators see their jobs through to the end.
    ``log`` records the cycle in which each pod was bound and its PodGroup; while running, the gang
    is registered in ``GANGS`` under ``api``, where ``eventually_bound`` finds it.
    """

    def __init__(self, lc: cluster.LocalCluster, api: k8s.ApiClient, *, run_seconds: float = 5.0) -> None:
        self.threads: list[loopthread.LoopThread] = []
        self.api = api
        self.log = gangcheck.BindLog()
        if not scheduler_available():
            return
        from scheduler import configure
        from scheduler.io import loop
        from vbridge.nodesim import nodes

        specs = nodes.pool(4, prefix="op-node", cpu="8", memory="32Gi")
        self.threads.append(simthread.SimThread(lc.kubeconfig, specs, default_run_seconds=run_seconds).start())
        for spec in specs:
            # Without the node lifecycle controller nobody lifts the not-ready taint new nodes get.
            k8s.CoreV1Api(api).patch_node(spec.name, {"spec": {"taints": None}})

        async def main(ready: asyncio.Event) -> None:
            async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=32) as conn:
                sched = loop.Scheduler(conn, configure.default(), period=0.5, on_cycle=self.log.record)
                task = asyncio.create_task(sched.run())
                await sched.cache.synced.wait()
                ready.set()
                await task

        self.threads.append(loopthread.LoopThread(main, "scheduler").start())
        GANGS[api] = self

    @property
    def on(self) -> bool:
        return bool(self.threads)

    def stop(self) -> None:
        if GANGS.get(self.api) is self:
            del GANGS[self.api]
        for thread in reversed(self.threads):
            thread.stop()
        self.threads.clear()


# The running Gangs, by the api client their tests read the cluster with.
GANGS: dict[k8s.ApiClient, Gang] = {}
