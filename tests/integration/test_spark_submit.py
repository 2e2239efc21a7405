"""The real spark-submit (pyspark's), cluster mode, against the test bed with our bridge.

No operator: spark-submit creates the driver pod and its conf ConfigMap itself. The driver never
runs (nodes are simulated and there is no image), so this proves admission: the driver pod our
webhook saw is stamped and gated, the PodGroup is sized from the conf Spark really wrote, and the
gate is lifted once the group is complete. On both backends (``planes``), each on its own
control plane: on native the driver asks for kube-scheduler, joins its native PodGroup, and
kube-scheduler binds it once our scheduler lifted the queue gate as well.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import keys
from bridge.adapters.spark import conf as sparkconf
from tests.support import apiserver, nativebed, operator_env, planes
from vbridge.localcluster import operators

pytestmark = [pytest.mark.integration, pytest.mark.operators]
GROUP_NAME = "scheduling.k8s.io/group-name"


on, namespace = planes.on, planes.namespace  # the fixtures: each backend on its own plane


@pytest.fixture(scope="module")
def token_kubeconfig(on: planes.Plane) -> pathlib.Path:
    return operators.token_kubeconfig(on.lc, on.lc.workdir / "spark-submit" / "kubeconfig")


@pytest.fixture(scope="module")
def home() -> Iterator[pathlib.Path]:
    yield operator_env.spark_home()


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


def check_driver(on: planes.Plane, namespace: str, home: pathlib.Path, *, binds: bool = True) -> dict[str, Any]:
    """The driver pod as our webhook left it, with the conf Spark really wrote; returns the PodGroup.
    On native, kube-scheduler then binds the driver (unless not ``binds``)."""
    api = on.api
    [driver] = apiserver.pods(api, namespace, "spark-role=driver")
    meta, spec = driver["metadata"], driver["spec"]
    app_id = meta["labels"]["spark-app-selector"]
    assert app_id.startswith("spark-") and len(app_id) == 38
    assert meta["labels"]["spark-app-name"] == "spark-pi"
    assert meta["labels"]["spark-version"] == operators.spark_version(home)
    assert meta["annotations"][GROUP_NAME] == f"{app_id}-podgroup"
    assert spec["schedulerName"] == on.binder
    if on.native:
        assert spec["schedulingGroup"] == {"podGroupName": f"{app_id}-podgroup"}
    # Spark's own driver arguments, with ours first: the driver makes its executors grouped. The
    # executors still name our scheduler (``volcano``) on both backends; on native they carry no
    # grouped label: Spark cannot write schedulingGroup, so our webhook must stamp each executor.
    ours = [
        f"spark.kubernetes.executor.annotation.{GROUP_NAME}={app_id}-podgroup",
        "spark.kubernetes.executor.scheduler.name=volcano",
        *([] if on.native else ["spark.kubernetes.executor.label.vbridge.io/grouped=true"]),
    ]
    args = spec["containers"][0]["args"]
    assert args[: 1 + 2 * len(ours)] == ["driver", *(x for conf in ours for x in ("--conf", conf))]
    assert args[1 + 2 * len(ours)] == "--properties-file"

    conf_map = sparkconf.conf_map_name(driver)
    assert conf_map is not None
    cm = k8s.CoreV1Api(api).read_namespaced_config_map(conf_map, namespace)
    conf = sparkconf.parse_properties(cm.data["spark.properties"])
    assert conf["spark.app.id"] == app_id and conf["spark.executor.instances"] == "3"

    def complete() -> list[dict[str, Any]] | None:
        found = apiserver.podgroups(api, namespace)
        return found if found and found[0]["spec"].get("minResources") else None

    [pg] = apiserver.eventually(complete, what="the driver's PodGroup, complete")
    assert pg["metadata"]["name"] == f"{app_id}-podgroup"
    # driver: 1 cpu, 1g + 384Mi; executors: 3 × (2 cpu, 1g + 384Mi), from the conf Spark wrote.
    assert pg["spec"]["minResources"] == {"cpu": "7", "memory": "5632Mi"}
    assert pg["spec"]["minMember"] == 1
    owner = pg["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Pod", meta["name"], meta["uid"])
    apiserver.eventually(
        lambda: not apiserver.pods(api, namespace, "spark-role=driver")[0]["spec"].get("schedulingGates"),
        what="the driver's gates to be lifted",
    )
    if on.native and binds:  # our queue admitted the group (the queue gate is gone), kube-scheduler binds it
        bound = apiserver.eventually(
            lambda: (d := apiserver.pods(api, namespace, "spark-role=driver")[0])["spec"].get("nodeName") and d,
            timeout=60,
            what=lambda: f"kube-scheduler to bind the driver; {_where(on, namespace, pg['metadata']['name'])}",
        )
        assert keys.QUEUE_GATE not in str(bound["spec"].get("schedulingGates"))
    return pg


def _where(on: planes.Plane, namespace: str, group: str) -> str:
    """Where the driver stands: its gates and conditions, our group's and kube-scheduler's."""
    [driver] = apiserver.pods(on.api, namespace, "spark-role=driver")
    ours = k8s.CustomObjectsApi(on.api).get_namespaced_custom_object(*apiserver.PG, namespace, "podgroups", group)
    theirs = nativebed.native_podgroup(on.api, namespace, group)
    return (
        f"driver gates {driver['spec'].get('schedulingGates')}, conditions {driver['status'].get('conditions')}; "
        f"our group {ours.get('status')}; native group {theirs and theirs.get('status')}"
    )


@pytest.mark.timeout(300)
def test_spark_submit_cluster_mode_driver_is_stamped_and_grouped_from_its_real_conf(
    on: planes.Plane, namespace: str, home: pathlib.Path, token_kubeconfig: pathlib.Path
) -> None:
    done = submit(home, on.lc.server, token_kubeconfig, namespace)
    assert done.returncode == 0, done.stderr[-3000:]
    pg = check_driver(on, namespace, home)
    assert pg["spec"]["queue"] == "default"


@pytest.mark.timeout(300)
def test_spark_submit_volcano_feature_step_group_is_completed_not_replaced(
    on: planes.Plane, namespace: str, token_kubeconfig: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    home = operator_env.spark4_home()
    # The class the template names exists, as on a user's cluster: on native the apiserver
    # refuses a native PodGroup naming a PriorityClass that does not (Volcano would ignore it).
    with contextlib.suppress(k8s.ApiException):  # made already, by the other test of this plane
        k8s.SchedulingV1Api(on.api).create_priority_class({"metadata": {"name": "batch"}, "value": 1000})
    template = tmp_path / "podgroup.yaml"
    template.write_text(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nspec:\n  priorityClassName: batch\n"
    )
    step = "org.apache.spark.deploy.k8s.features.VolcanoFeatureStep"
    done = submit(
        home,
        on.lc.server,
        token_kubeconfig,
        namespace,
        f"spark.kubernetes.driver.pod.featureSteps={step}",
        f"spark.kubernetes.executor.pod.featureSteps={step}",
        f"spark.kubernetes.scheduler.volcano.podGroupTemplateFile={template}",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # Spark made the group (a pre-resource, before the driver pod) from the template; we filled
    # in what it left out and kept what it set.
    pg = check_driver(on, namespace, home, binds=False)
    assert pg["spec"]["priorityClassName"] == "batch"
    if on.native:
        # A difference (README, Backends): the native PodGroup carries the group's class, the driver
        # (Spark's, not templated) has none; kube-scheduler refuses a group whose pods' priority differs.
        condition = apiserver.eventually(
            lambda: next(
                (
                    c
                    for c in apiserver.pods(on.api, namespace, "spark-role=driver")[0]["status"].get("conditions") or []
                    if c["type"] == "PodScheduled" and c["reason"] == "SchedulerError"
                ),
                None,
            ),
            timeout=60,
            what=lambda: f"kube-scheduler's verdict; {_where(on, namespace, pg['metadata']['name'])}",
        )
        assert "should have the same priority as the pod group's priority, got 0 and 1000" in condition["message"]
    assert "vbridge.io/managed-by" not in (pg["metadata"].get("labels") or {})  # made by Spark
