"""The real Kubeflow spark-operator (v2.5.2, default flags) and pyspark's spark-submit, with our bridge.

Upstream example manifests from the operator's own module, unchanged except for the namespace:
``spark-pi-volcano.yaml`` (asks for volcano) and ``spark-pi.yaml`` in a namespace opted in with
``vbridge.io/gang-scheduling=enabled``. The operator runs without its webhook and without
``--enable-batch-scheduler``: the SparkApplication stamp is what reaches the pods, through the
operator's own translation into spark-submit confs. Driver pods never run (simulated nodes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge.localcluster import binaries
from tests.integration import test_spark_submit as common
from tests.integration.test_controlplane import eventually
from tests.support import operator_env

pytestmark = [pytest.mark.integration, pytest.mark.operators]
GROUP_NAME = common.GROUP_NAME


@pytest.fixture(scope="module")
def env(
    bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[k8s.ApiClient, Any, common.Gang]]:
    yield from operator_env.running("spark-operator", bins, tmp_path_factory, spark=common.spark_home())


def example(name: str) -> dict[str, Any]:
    return operator_env.upstream_example("spark-operator", name)


def make_namespace(api: k8s.ApiClient, name: str, labels: dict[str, str] | None = None) -> str:
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name, labels=labels)))
    return name


def submit(api: k8s.ApiClient, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        "sparkoperator.k8s.io", "v1beta2", ns, "sparkapplications", body
    )
    return out


def app_state(api: k8s.ApiClient, ns: str, name: str) -> str:
    app = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
        "sparkoperator.k8s.io", "v1beta2", ns, "sparkapplications", name
    )
    return str(((app.get("status") or {}).get("applicationState") or {}).get("state", ""))


def check_driver(api: k8s.ApiClient, op: Any, ns: str, app: str, group: str) -> dict[str, Any]:
    drivers = eventually(
        lambda: common.pods(api, ns, "spark-role=driver"), timeout=90, what=f"{app}'s driver pod\n{op.tail()}"
    )
    [driver] = drivers
    meta, spec = driver["metadata"], driver["spec"]
    assert meta["labels"]["sparkoperator.k8s.io/app-name"] == app
    assert meta["labels"]["sparkoperator.k8s.io/launched-by-spark-operator"] == "true"
    assert meta["labels"]["sparkoperator.k8s.io/submission-id"]
    assert meta["annotations"][GROUP_NAME] == group
    assert spec["schedulerName"] == "volcano"
    eventually(
        lambda: not common.pods(api, ns, "spark-role=driver")[0]["spec"].get("schedulingGates"),
        what="the driver's gate to be lifted",
    )
    [pg] = common.podgroups(api, ns)  # exactly one group: ours, which the operator's pods joined
    assert pg["metadata"]["name"] == group
    return driver


@pytest.mark.timeout(600)
def test_spark_pi_volcano_example_gets_one_group_and_stamped_driver(
    env: tuple[k8s.ApiClient, Any, common.Gang],
) -> None:
    api, op, gang = env
    ns = make_namespace(api, "spark-volcano")
    app = submit(api, ns, example("spark-pi-volcano.yaml"))
    group = "spark-spark-pi-volcano-pg"
    assert app["spec"]["driver"]["annotations"][GROUP_NAME] == group
    [pg] = eventually(lambda: common.podgroups(api, ns), what="the SparkApplication's PodGroup")
    # driver + 2 executors, each 1 cpu and 512m + 384Mi overhead (Spark's rules).
    assert pg["spec"] == {"minMember": 1, "queue": "default", "minResources": {"cpu": "3", "memory": "2688Mi"}}
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "SparkApplication"
    check_driver(api, op, ns, "spark-pi-volcano", group)
    states = {"SUBMITTED", "RUNNING", "SUCCEEDING", "COMPLETED"}
    eventually(lambda: app_state(api, ns, "spark-pi-volcano") in states, what="the operator to report the submission")
    if gang.on:
        # The simulated driver "finishes" (it creates no executors: no real JVM runs), and the
        # operator follows its pod to the end.
        common.eventually_bound(api, ns, "spark-role=driver", 1)
        eventually(
            lambda: app_state(api, ns, "spark-pi-volcano") == "COMPLETED",
            timeout=120,
            what=f"the application to complete\n{op.tail()}",
        )


@pytest.mark.timeout(600)
def test_spark_pi_example_in_opted_in_namespace(env: tuple[k8s.ApiClient, Any, common.Gang]) -> None:
    api, op, _ = env
    ns = make_namespace(api, "spark-opted-in", {"vbridge.io/gang-scheduling": "enabled"})
    submit(api, ns, example("spark-pi.yaml"))
    [pg] = eventually(lambda: common.podgroups(api, ns), what="the SparkApplication's PodGroup")
    # driver + 1 executor
    assert pg["spec"]["minResources"] == {"cpu": "2", "memory": "1792Mi"}
    driver = check_driver(api, op, ns, "spark-pi", "spark-spark-pi-pg")
    assert driver["metadata"]["labels"]["version"] == "4.0.0"  # the manifest's driver label
