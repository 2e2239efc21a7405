"""The real spark-operator (v2.5.2) on the native backend: its ``spark-pi-volcano.yaml``, unchanged.

As ``tests/integration/test_operators_spark.py`` runs it on the volcano backend; here the bridge
runs with ``backend="native"`` and kube-scheduler places the pods. The application keeps its
Volcano PodGroup (minMember 1, the executors' capacity in minResources); its native PodGroup is
``basic`` (a Spark gang is the driver alone, schedulable first). The driver the operator's
spark-submit creates is admitted on kube-scheduler, joined to the group and gated twice: by our
Spark gate (lifted by the Spark reconciler once the group is complete) and by the queue gate
(lifted by our scheduler, ``backend="native"``, once the queue admits the group). Then
kube-scheduler binds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import keys
from tests.support import apiserver, nativebed, operator_env, spark_operator
from vbridge.localcluster import binaries

pytestmark = [pytest.mark.integration, pytest.mark.operators]
GROUP = "spark-spark-pi-volcano-pg"


@pytest.fixture(scope="module")
def api(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[k8s.ApiClient]:
    workdir = tmp_path_factory.mktemp("native-spark")
    spark = operator_env.spark_home()
    with nativebed.run(
        bins,
        workdir,
        namespace="native-spark",
        prefix="ns",
        cpu="8",
        backend="native",
        operator="spark-operator",
        spark=spark,
    ) as client:
        yield client


def _driver(api: k8s.ApiClient, ns: str) -> dict[str, Any] | None:
    found = apiserver.pods(api, ns, "spark-role=driver")
    return found[0] if found else None


@pytest.mark.timeout(600)
def test_spark_pi_volcano_example_driver_is_placed_by_kube_scheduler(api: k8s.ApiClient) -> None:
    ns = spark_operator.make_namespace(api, "spark-volcano")
    spark_operator.submit(api, ns, spark_operator.example("spark-pi-volcano.yaml"))
    pg = spark_operator.the_podgroup(api, ns)
    assert pg["spec"]["minMember"] == 1 and pg["spec"]["minResources"] == {"cpu": "3", "memory": "2688Mi"}

    assert apiserver.eventually(lambda: nativebed.native_podgroup(api, ns, GROUP), what="the native PodGroup")["spec"][
        "schedulingPolicy"
    ] == {"basic": {}}
    driver = apiserver.eventually(lambda: _driver(api, ns), timeout=120, what="the driver pod")
    assert driver["spec"]["schedulerName"] == "default-scheduler"
    assert driver["spec"]["schedulingGroup"] == {"podGroupName": GROUP}
    gates = [g["name"] for g in driver["spec"].get("schedulingGates") or []]
    assert keys.QUEUE_GATE not in gates or not driver["spec"].get("nodeName")  # never bound while gated

    def bound() -> dict[str, Any] | None:
        pod = _driver(api, ns)
        return pod if pod and pod["spec"].get("nodeName") and not pod["spec"].get("schedulingGates") else None

    placed = apiserver.eventually(bound, timeout=120, what="the driver ungated, bound by kube-scheduler")
    assert placed["spec"]["schedulerName"] == "default-scheduler"
