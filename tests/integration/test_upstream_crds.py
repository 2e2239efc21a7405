"""Upstream CRDs from the pinned Go modules install, and our examples pass their schema validation."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from tests.support import upstream
from vbridge.localcluster import cluster, depcrds

pytestmark = pytest.mark.integration
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _create(api_client: k8s.ApiClient, manifest: str, namespace: str) -> dict[str, Any]:
    body = yaml.safe_load((ROOT / "examples" / manifest).read_text())
    group, version = body["apiVersion"].split("/")
    plural = body["kind"].lower() + "s"
    body["metadata"].pop("namespace", None)
    created: dict[str, Any] = k8s.CustomObjectsApi(api_client).create_namespaced_custom_object(
        group, version, namespace, plural, body
    )
    return created


def test_dep_crds_come_from_the_pinned_modules() -> None:
    files = depcrds.ensure("spark-operator", upstream.CACHE)
    assert [f.name for f in files] == [
        "sparkoperator.k8s.io_sparkapplications.yaml",
        "sparkoperator.k8s.io_scheduledsparkapplications.yaml",
        "sparkoperator.k8s.io_sparkconnects.yaml",
    ]
    assert files[0].parent.name == "spark-operator-v2.5.2"
    crd = yaml.safe_load(files[0].read_text())
    assert crd["metadata"]["name"] == "sparkapplications.sparkoperator.k8s.io"


def test_examples_pass_upstream_schema_validation(
    control_plane: cluster.LocalCluster, api_client: k8s.ApiClient, namespace: str
) -> None:
    upstream.install(control_plane, "spark-operator", "training-operator", "mpi-operator")
    spark = _create(api_client, "sparkapplication-pi-volcano.yaml", namespace)
    assert spark["spec"]["batchScheduler"] == "volcano"
    other = k8s.CoreV1Api(api_client).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(generate_name="t-")))
    assert _create(api_client, "sparkapplication-pi.yaml", other.metadata.name)["kind"] == "SparkApplication"
    tf = _create(api_client, "tfjob-v1.yaml", namespace)
    assert set(tf["spec"]["tfReplicaSpecs"]) == {"Master", "Worker", "PS"}
    assert _create(api_client, "pytorchjob-elastic.yaml", namespace)["spec"]["elasticPolicy"]["minReplicas"] == 2
    mpi = _create(api_client, "mpijob-v2beta1.yaml", namespace)
    assert mpi["apiVersion"] == "kubeflow.org/v2beta1"

    with pytest.raises(k8s.ApiException) as bad:
        bad_app = yaml.safe_load((ROOT / "examples" / "sparkapplication-pi.yaml").read_text())
        bad_app["metadata"] = {"name": "bad-app"}
        bad_app["spec"]["type"] = "Cobol"
        k8s.CustomObjectsApi(api_client).create_namespaced_custom_object(
            "sparkoperator.k8s.io", "v1beta2", namespace, "sparkapplications", bad_app
        )
    assert bad.value.status == 422 and "spec.type" in bad.value.body
