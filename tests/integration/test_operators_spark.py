"""The real Kubeflow spark-operator (v2.5.2, default flags) and pyspark's spark-submit, with our bridge.

Upstream example manifests from the operator's own module, unchanged except for the namespace:
``spark-pi-volcano.yaml`` (asks for volcano), and ``spark-pi.yaml``,
``spark-pi-dynamic-allocation.yaml`` and ``spark-pi-python.yaml`` in namespaces opted in with
``vbridge.io/gang-scheduling=enabled``; ``sparkconnect/spark-connect.yaml`` (a SparkConnect, in
a queue of its own). The operator runs without its webhook and without
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
from tests.builders import spark
from tests.support import apiserver, gangs, operator_env, schedbed, spark_operator
from vbridge import nodesim
from vbridge.localcluster import binaries

pytestmark = [pytest.mark.integration, pytest.mark.operators]
GROUP_NAME = apiserver.GROUP_NAME
OPTED_IN = {keys.OPT_IN_LABEL: "enabled"}


@pytest.fixture(scope="module")
def env(
    bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[k8s.ApiClient, Any, gangs.Gang]]:
    yield from operator_env.running("spark-operator", bins, tmp_path_factory, spark=operator_env.spark_home())


@pytest.mark.timeout(600)
def test_spark_pi_volcano_example_gets_one_group_and_stamped_driver(
    env: tuple[k8s.ApiClient, Any, gangs.Gang],
) -> None:
    api, op, gang = env
    ns = spark_operator.make_namespace(api, "spark-volcano")
    app = spark_operator.submit(api, ns, spark_operator.example("spark-pi-volcano.yaml"))
    group = "spark-spark-pi-volcano-pg"
    assert app["spec"]["driver"]["annotations"][GROUP_NAME] == group
    pg = spark_operator.the_podgroup(api, ns)
    # driver + 2 executors, each 1 cpu and 512m + 384Mi overhead (Spark's rules).
    assert pg["spec"] == {"minMember": 1, "queue": "default", "minResources": {"cpu": "3", "memory": "2688Mi"}}
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "SparkApplication"
    spark_operator.check_driver(api, op, ns, "spark-pi-volcano", group)
    states = {"SUBMITTED", "RUNNING", "SUCCEEDING", "COMPLETED"}
    apiserver.eventually(
        lambda: spark_operator.app_state(api, ns, "spark-pi-volcano") in states,
        what="the operator to report the submission",
    )
    # The simulated driver "finishes" (it creates no executors: no real JVM runs), and the
    # operator follows its pod to the end.
    spark_operator.run_to_completion(api, op, gang, ns, "spark-pi-volcano", group)


@pytest.mark.timeout(600)
def test_spark_pi_example_in_opted_in_namespace(env: tuple[k8s.ApiClient, Any, gangs.Gang]) -> None:
    api, op, _ = env
    ns = spark_operator.make_namespace(api, "spark-opted-in", {"vbridge.io/gang-scheduling": "enabled"})
    spark_operator.submit(api, ns, spark_operator.example("spark-pi.yaml"))
    pg = spark_operator.the_podgroup(api, ns)
    # driver + 1 executor
    assert pg["spec"]["minResources"] == {"cpu": "2", "memory": "1792Mi"}
    driver = spark_operator.check_driver(api, op, ns, "spark-pi", "spark-spark-pi-pg")
    assert driver["metadata"]["labels"]["version"] == "4.0.0"  # the manifest's driver label


@pytest.mark.timeout(600)
def test_spark_pi_dynamic_allocation_example_reserves_the_start_size_and_completes(
    env: tuple[k8s.ApiClient, Any, gangs.Gang],
) -> None:
    api, op, gang = env
    ns = spark_operator.make_namespace(api, "spark-dynamic", OPTED_IN)
    body = spark_operator.example("spark-pi-dynamic-allocation.yaml")
    spark_operator.submit(api, ns, body)
    app, group = "spark-pi-dynamic-allocation", "spark-spark-pi-dynamic-allocation-pg"
    pg = spark_operator.the_podgroup(api, ns)
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
    driver = spark_operator.check_driver(api, op, ns, app, group)
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
    spark_operator.run_to_completion(api, op, gang, ns, app, group)


@pytest.mark.timeout(600)
def test_spark_pi_python_example_in_opted_in_namespace_completes(
    env: tuple[k8s.ApiClient, Any, gangs.Gang],
) -> None:
    api, op, gang = env
    ns = spark_operator.make_namespace(api, "spark-python", OPTED_IN)
    spark_operator.submit(api, ns, spark_operator.example("spark-pi-python.yaml"))
    app, group = "spark-pi-python", "spark-spark-pi-python-pg"
    pg = spark_operator.the_podgroup(api, ns)
    # type Python: the overhead factor is 0.4, but 0.4 × 512 MiB = 204.8 MiB is still under the
    # 384 MiB floor. Driver + 1 executor, each 1 cpu and 512 + 384 = 896 MiB.
    assert pg["spec"]["minResources"] == {"cpu": "2", "memory": "1792Mi"}
    driver = spark_operator.check_driver(api, op, ns, app, group)
    container = driver["spec"]["containers"][0]
    assert container["args"][-2:] == [
        "org.apache.spark.deploy.PythonRunner",
        "local:///opt/spark/examples/src/main/python/pi.py",
    ]
    requests = container["resources"]["requests"]
    assert (requests["cpu"], requests["memory"]) == ("1", "896Mi")
    spark_operator.run_to_completion(api, op, gang, ns, app, group)


@pytest.mark.timeout(300)
def test_spark_connect_example_server_and_executors_share_one_group(
    env: tuple[k8s.ApiClient, Any, gangs.Gang],
) -> None:
    """The operator makes the server pod; our stamps reach it, and through its start command the
    executors. The simulated node runs no Spark, so no executor would ever appear: the test makes
    the 2 executors the server's Spark would, from the confs the operator gave it."""
    api, op, gang = env
    ns = spark_operator.make_namespace(api, "spark-connect")
    schedbed.queue(api, "connect", 1)
    body = spark_operator.example("sparkconnect/spark-connect.yaml")
    body["metadata"]["annotations"] = {keys.QUEUE_NAME: "connect"}
    # A server runs until deleted; the simulated one must not "finish" after the default seconds.
    body["spec"]["server"]["template"]["metadata"]["annotations"][nodesim.RUN_SECONDS] = "3600"
    objects = k8s.CustomObjectsApi(api)

    def created() -> dict[str, Any] | None:
        try:
            out: dict[str, Any] = objects.create_namespaced_custom_object(
                "sparkoperator.k8s.io", "v1alpha1", ns, "sparkconnects", body
            )
            return out
        except k8s.ApiException as exc:  # the webhook's queue watch has not shown the new queue yet
            assert exc.status in (400, 403) and "connect" in str(exc.body), exc.body
            return None

    apiserver.eventually(created, what="the SparkConnect to be admitted")
    group = "sparkconnect-spark-connect-pg"
    pg = spark_operator.the_podgroup(api, ns)
    # The server asks for what its template says (1 cpu, 1Gi); Spark starts 2 executors (instances),
    # each cores 1 and 512m + the 384 MiB overhead floor: 1 + 2 = 3 cpu, 1024 + 2 × 896 = 2816 MiB.
    assert pg["metadata"]["name"] == group
    assert pg["spec"] == {"minMember": 1, "queue": "connect", "minResources": {"cpu": "3", "memory": "2816Mi"}}
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "SparkConnect"
    [server] = apiserver.eventually(
        lambda: apiserver.pods(api, ns, "spark-role=connect-server"), timeout=60, what=f"the server pod\n{op.tail()}"
    )
    assert server["metadata"]["name"] == "spark-connect-server"
    assert server["metadata"]["annotations"][GROUP_NAME] == group
    assert server["spec"]["schedulerName"] == "volcano"
    conf = spark_operator.start_confs(server)
    assert conf[f"spark.kubernetes.executor.annotation.{GROUP_NAME}"] == group
    assert conf["spark.kubernetes.executor.scheduler.name"] == "volcano"
    assert conf["spark.executor.instances"] == "2"
    if not gang.on:
        return
    gangs.eventually_bound(api, ns, "spark-role=connect-server", 1)
    apiserver.eventually(
        lambda: apiserver.pods(api, ns, "spark-role=connect-server")[0]["status"].get("phase") == "Running",
        what="the server to run",
    )
    [server] = apiserver.pods(api, ns, "spark-role=connect-server")
    core = k8s.CoreV1Api(api)
    for index in (1, 2):
        core.create_namespaced_pod(ns, spark.connect_executor(server, conf, index, app_id="spark-0123456789abcdef"))
    gangs.eventually_bound(api, ns, "spark-role=executor", 2)
    executors = apiserver.pods(api, ns, "spark-role=executor")
    assert {p["metadata"]["annotations"][GROUP_NAME] for p in executors} == {group}
    assert {p["metadata"]["labels"]["sparkoperator.k8s.io/connect-name"] for p in executors} == {"spark-connect"}
