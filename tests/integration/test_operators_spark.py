"""The real Kubeflow spark-operator (v2.5.2, default flags) and pyspark's spark-submit, with our bridge.

Upstream example manifests from the operator's own module, unchanged except for the namespace:
``spark-pi-volcano.yaml`` (asks for volcano), and ``spark-pi.yaml``,
``spark-pi-dynamic-allocation.yaml`` and ``spark-pi-python.yaml`` in namespaces opted in with
``vbridge.io/gang-scheduling=enabled``. The operator runs without its webhook and without
``--enable-batch-scheduler``: the SparkApplication stamp is what reaches the pods, through the
operator's own translation into spark-submit confs and the real spark-submit it runs. Driver pods
run on simulated nodes: no container starts, the pod "succeeds" after a few seconds and the
operator follows it to COMPLETED.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import keys
from bridge.adapters.spark import conf as sparkconf
from tests.integration import test_spark_submit as common
from tests.integration.test_controlplane import eventually
from tests.support import operator_env
from vbridge.localcluster import binaries

pytestmark = [pytest.mark.integration, pytest.mark.operators]
GROUP_NAME = common.GROUP_NAME
OPTED_IN = {keys.OPT_IN_LABEL: "enabled"}


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


def the_podgroup(api: k8s.ApiClient, ns: str) -> dict[str, Any]:
    """The one PodGroup in ``ns`` (the SparkApplication's), once it exists."""
    [pg] = eventually(lambda: common.podgroups(api, ns), what="the SparkApplication's PodGroup")
    return pg


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


def run_to_completion(api: k8s.ApiClient, op: Any, gang: common.Gang, ns: str, app: str, group: str) -> None:
    """Our scheduler binds the driver, the simulated node finishes it, the operator completes the app.

    The group is then collected (the bridge deletes a finished application's group, releasing its
    queue share) or, until then, Completed (our scheduler's verdict once every member finished).
    """
    if not gang.on:
        return
    common.eventually_bound(api, ns, "spark-role=driver", 1)
    [driver] = common.pods(api, ns, "spark-role=driver")
    assert driver["spec"]["nodeName"].startswith("op-node-")  # a Gang node: only our scheduler binds there
    eventually(lambda: app_state(api, ns, app) == "COMPLETED", timeout=120, what=f"{app} to complete\n{op.tail()}")

    def group_done() -> bool:
        found = [pg for pg in common.podgroups(api, ns) if pg["metadata"]["name"] == group]
        return not found or (found[0].get("status") or {}).get("phase") == "Completed"

    eventually(group_done, what=f"PodGroup {group} to be Completed or collected")


@pytest.mark.timeout(600)
def test_spark_pi_volcano_example_gets_one_group_and_stamped_driver(
    env: tuple[k8s.ApiClient, Any, common.Gang],
) -> None:
    api, op, gang = env
    ns = make_namespace(api, "spark-volcano")
    app = submit(api, ns, example("spark-pi-volcano.yaml"))
    group = "spark-spark-pi-volcano-pg"
    assert app["spec"]["driver"]["annotations"][GROUP_NAME] == group
    pg = the_podgroup(api, ns)
    # driver + 2 executors, each 1 cpu and 512m + 384Mi overhead (Spark's rules).
    assert pg["spec"] == {"minMember": 1, "queue": "default", "minResources": {"cpu": "3", "memory": "2688Mi"}}
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "SparkApplication"
    check_driver(api, op, ns, "spark-pi-volcano", group)
    states = {"SUBMITTED", "RUNNING", "SUCCEEDING", "COMPLETED"}
    eventually(lambda: app_state(api, ns, "spark-pi-volcano") in states, what="the operator to report the submission")
    # The simulated driver "finishes" (it creates no executors: no real JVM runs), and the
    # operator follows its pod to the end.
    run_to_completion(api, op, gang, ns, "spark-pi-volcano", group)


@pytest.mark.timeout(600)
def test_spark_pi_example_in_opted_in_namespace(env: tuple[k8s.ApiClient, Any, common.Gang]) -> None:
    api, op, _ = env
    ns = make_namespace(api, "spark-opted-in", {"vbridge.io/gang-scheduling": "enabled"})
    submit(api, ns, example("spark-pi.yaml"))
    pg = the_podgroup(api, ns)
    # driver + 1 executor
    assert pg["spec"]["minResources"] == {"cpu": "2", "memory": "1792Mi"}
    driver = check_driver(api, op, ns, "spark-pi", "spark-spark-pi-pg")
    assert driver["metadata"]["labels"]["version"] == "4.0.0"  # the manifest's driver label


@pytest.mark.timeout(600)
def test_spark_pi_dynamic_allocation_example_reserves_the_start_size_and_completes(
    env: tuple[k8s.ApiClient, Any, common.Gang],
) -> None:
    api, op, gang = env
    ns = make_namespace(api, "spark-dynamic", OPTED_IN)
    body = example("spark-pi-dynamic-allocation.yaml")
    submit(api, ns, body)
    app, group = "spark-pi-dynamic-allocation", "spark-spark-pi-dynamic-allocation-pg"
    pg = the_podgroup(api, ns)
    # By hand, from the manifest. Executors to hold room for: with dynamic allocation, Spark
    # starts max(instances 1, initialExecutors 2, minExecutors 1) = 2 (maxExecutors 5 is never
    # reserved). Every pod (driver and executors alike) is cores 1, memory "512m" (a JVM size:
    # 512 MiB) + overhead max(0.1 × 512 MiB = 51.2 MiB, 384 MiB) = 896 MiB.
    # Driver + 2 executors: 3 cpu and 3 × 896 = 2688 MiB.
    spec = body["spec"]
    dyn = spec["dynamicAllocation"]
    assert max(spec["executor"]["instances"], dyn["initialExecutors"], dyn["minExecutors"]) == 2
    assert pg["metadata"]["name"] == group
    assert pg["spec"] == {"minMember": 1, "queue": "default", "minResources": {"cpu": "3", "memory": "2688Mi"}}
    driver = check_driver(api, op, ns, app, group)
    # Spark's own sizing of the pod it made agrees with our share for the driver.
    requests = driver["spec"]["containers"][0]["resources"]["requests"]
    assert (requests["cpu"], requests["memory"]) == ("1", "896Mi")
    # The operator handed dynamic allocation to spark-submit, which wrote it into the driver's conf.
    conf_map = sparkconf.conf_map_name(driver)
    assert conf_map is not None
    cm = k8s.CoreV1Api(api).read_namespaced_config_map(conf_map, ns)
    conf = sparkconf.parse_properties((cm.data or {})["spark.properties"])
    assert conf["spark.dynamicAllocation.enabled"] == "true"
    assert conf["spark.dynamicAllocation.initialExecutors"] == "2"
    run_to_completion(api, op, gang, ns, app, group)


@pytest.mark.timeout(600)
def test_spark_pi_python_example_in_opted_in_namespace_completes(
    env: tuple[k8s.ApiClient, Any, common.Gang],
) -> None:
    api, op, gang = env
    ns = make_namespace(api, "spark-python", OPTED_IN)
    submit(api, ns, example("spark-pi-python.yaml"))
    app, group = "spark-pi-python", "spark-spark-pi-python-pg"
    pg = the_podgroup(api, ns)
    # type Python: the overhead factor is 0.4, but 0.4 × 512 MiB = 204.8 MiB is still under the
    # 384 MiB floor. Driver + 1 executor, each 1 cpu and 512 + 384 = 896 MiB.
    assert pg["spec"]["minResources"] == {"cpu": "2", "memory": "1792Mi"}
    driver = check_driver(api, op, ns, app, group)
    container = driver["spec"]["containers"][0]
    assert container["args"][-2:] == [
        "org.apache.spark.deploy.PythonRunner",
        "local:///opt/spark/examples/src/main/python/pi.py",
    ]
    requests = container["resources"]["requests"]
    assert (requests["cpu"], requests["memory"]) == ("1", "896Mi")
    run_to_completion(api, op, gang, ns, app, group)
