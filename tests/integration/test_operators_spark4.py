"""The real spark-operator (v2.5.2, default flags) running pyspark 4.x's spark-submit.

The Spark 4 line ships ``VolcanoFeatureStep`` in its standard build; the operator, without its
batch-scheduler flag, never asks for it, so the driver pod the 4.x submission client creates
reaches our webhook exactly as a 3.5 one does (``test_operators_spark.py``): it must come out
stamped, held until its group is complete, bound by our scheduler, and run to COMPLETED.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.support import gangs, operator_env, spark_operator
from vbridge.localcluster import binaries, operators

pytestmark = [pytest.mark.integration, pytest.mark.operators]


@pytest.fixture(scope="module")
def env(
    bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[k8s.ApiClient, Any, gangs.Gang]]:
    yield from operator_env.running("spark-operator", bins, tmp_path_factory, spark=operator_env.spark4_home())


@pytest.mark.timeout(600)
def test_spark_pi_volcano_example_with_spark_4_submission(env: tuple[k8s.ApiClient, Any, gangs.Gang]) -> None:
    api, op, gang = env
    assert gang.on, "our scheduler is part of this checkout"
    ns = spark_operator.make_namespace(api, "spark4-volcano")
    spark_operator.submit(api, ns, spark_operator.example("spark-pi-volcano.yaml"))
    group = "spark-spark-pi-volcano-pg"
    pg = spark_operator.the_podgroup(api, ns)
    # Same sizing as on the 3.5 line: driver + 2 executors, each 1 cpu and 512m + 384Mi overhead.
    assert pg["spec"] == {"minMember": 1, "queue": "default", "minResources": {"cpu": "3", "memory": "2688Mi"}}
    driver = spark_operator.check_driver(api, op, ns, "spark-pi-volcano", group)
    # The driver was made by the 4.x submission client the operator ran.
    assert driver["metadata"]["labels"]["spark-version"] == operators.spark_version(operator_env.spark4_home())
    assert driver["metadata"]["labels"]["spark-version"].startswith("4.")
    spark_operator.run_to_completion(api, op, gang, ns, "spark-pi-volcano", group)
