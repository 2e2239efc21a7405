"""``vbridge list``'s view and kubectl's output conventions (``vbridge.commands.output``), on built objects.

Golden files under ``golden/list/`` are the exact text (``VBRIDGE_UPDATE_GOLDEN=1`` rewrites
them; review the diff).
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import Any

import pytest
import yaml

from bridge.adapters import registry
from tests.builders import kubeflow, spark, vcjob
from tests.builders import scheduler as b
from tests.support import golden
from vbridge import cli
from vbridge.commands import listing, output

GOLDEN = pathlib.Path(__file__).parent / "golden" / "list"


def objects() -> list[dict[str, Any]]:
    running = b.podgroup("lm-mpi-job-u1", namespace="seed", min_member=2, phase="Running")
    running["status"].update(running=2, succeeded=0)
    waiting = b.podgroup("wide", namespace="team-a", min_member=5, min_resources={"cpu": "70", "memory": "320Gi"})
    job = vcjob.mpi(state={"phase": "Running"}, running=2, retryCount=1)
    job["metadata"]["namespace"] = "seed"
    tf = kubeflow.tfjob("mnist")
    tf["status"] = {"conditions": [{"type": "Created", "status": "True"}, {"type": "Running", "status": "True"}]}
    app = spark.app()
    app["metadata"] = {"name": "spark-pi", "namespace": "seed"}
    app["status"] = {"applicationState": {"state": "COMPLETED"}}
    waiting_tf = kubeflow.tfjob("no-operator")  # no status: its operator never saw it
    return [running, waiting, job, tf, app, waiting_tf]


def args(*argv: str) -> argparse.Namespace:
    return cli.parser("list").parse_args(["list", *argv])


def shown(*argv: str, namespace: str | None = None) -> tuple[str, str]:
    return output.render(listing.tables(objects()), args(*argv), namespace)


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (("-A",), "all.txt"),
        (("-A", "-o", "wide"), "all-wide.txt"),
        (("-A", "--no-headers"), "all-no-headers.txt"),
        (("-A", "-o", "name"), "all-names.txt"),
    ],
)
def test_forms(argv: tuple[str, ...], name: str) -> None:
    out, err = shown(*argv)
    assert err == ""
    golden.check(GOLDEN, name, out + "\n")


def test_the_table_is_kubectls() -> None:
    out, _ = shown("-A")
    header = out.splitlines()[0]
    assert header.split() == ["NAMESPACE", "NAME", "PHASE", "MINMEMBER", "RUNNING", "SUCCEEDED", "QUEUE"]
    assert "   " in header and not header.endswith(" ")  # three spaces apart, no trailing blanks
    assert "{'cpu'" not in out and "70000m" not in out


def test_one_namespace_has_no_namespace_column() -> None:
    seed = listing.tables([o for o in objects() if o["metadata"].get("namespace") == "seed"])
    out, _ = output.render(seed, args("-n", "seed"), "seed")
    assert out.splitlines()[0].split()[:2] == ["NAME", "PHASE"]
    assert "lm-mpi-job-u1" in out and "wide" not in out


def test_wide_writes_min_resources_as_people_read_them() -> None:
    out, _ = shown("-A", "-o", "wide")
    [row] = [line for line in out.splitlines() if "   wide   " in line]
    assert row.endswith("   cpu 70, memory 320Gi")  # the MINRESOURCES column


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_json_and_yaml_are_a_list_of_the_objects(fmt: str) -> None:
    out, err = shown("-A", "-o", fmt)
    doc = json.loads(out) if fmt == "json" else yaml.safe_load(out)
    assert err == "" and doc["kind"] == "List" and doc["apiVersion"] == "v1"
    assert [(o["kind"], o["metadata"]["name"]) for o in doc["items"]] == [
        ("PodGroup", "lm-mpi-job-u1"),
        ("PodGroup", "wide"),
        ("Job", "lm-mpi-job"),
        ("SparkApplication", "spark-pi"),
        ("TFJob", "mnist"),
        ("TFJob", "no-operator"),
    ]


@pytest.mark.parametrize(
    ("argv", "namespace", "message"),
    [
        (("-n", "empty"), "empty", "No resources found in empty namespace."),
        (("-A",), None, "No resources found"),
        (("-n", "empty", "-o", "name"), "empty", "No resources found in empty namespace."),
    ],
)
def test_an_empty_list_says_so_like_kubectl(argv: tuple[str, ...], namespace: str | None, message: str) -> None:
    assert output.render(listing.tables([]), args(*argv), namespace) == ("", message)


def test_an_empty_list_as_json_is_an_empty_list() -> None:
    out, err = output.render(listing.tables([]), args("-o", "json"), "empty")
    assert json.loads(out)["items"] == [] and err == ""


def test_operator_jobs_without_status_get_a_hint() -> None:
    assert listing.hints(listing.tables(objects())) == [
        "note: 1 TFJob(s) without status: their PodGroups wait for pods only the training-operator creates; "
        "is it running? (`vbridge up --with-operators` runs it locally)"
    ]
    assert listing.hints(listing.tables(objects()[:-1])) == []


def test_xgboost_paddle_and_jax_jobs_are_training_operator_jobs() -> None:
    done = kubeflow.xgboostjob("iris")
    done["status"] = {"conditions": [{"type": "Running", "status": "False"}, {"type": "Succeeded", "status": "True"}]}
    jobs = [done, kubeflow.paddlejob("fleet"), kubeflow.jaxjob("spmd")]
    [_, _, operators] = listing.tables(jobs)
    assert [(o["kind"], listing.job_state(o)) for o in operators.items] == [
        ("PaddleJob", ""),  # by name: fleet, iris, spmd
        ("XGBoostJob", "Succeeded"),
        ("JAXJob", ""),
    ]
    assert listing.hints(listing.tables(jobs)) == [
        f"note: 1 {kind}(s) without status: their PodGroups wait for pods only the training-operator creates; "
        "is it running? (`vbridge up --with-operators` runs it locally)"
        for kind in ("PaddleJob", "JAXJob")
    ]


def test_job_state_of_a_spark_application_is_its_application_state() -> None:
    app = {"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication"}
    assert listing.job_state({**app, "status": {"applicationState": {"state": "COMPLETED"}}}) == "COMPLETED"
    assert listing.job_state({**app, "status": {"applicationState": None}}) == ""
    assert listing.job_state({**app, "status": {"conditions": [{"type": "Running", "status": "True"}]}}) == ""


CONNECT = {"apiVersion": "sparkoperator.k8s.io/v1alpha1", "kind": "SparkConnect"}


def test_job_state_of_a_spark_connect_is_its_state() -> None:
    assert listing.job_state({**CONNECT, "status": {"state": "Ready", "executors": {"running": 2}}}) == "Ready"
    assert listing.job_state({**CONNECT, "status": {}}) == ""


def test_spark_connects_are_listed_with_the_operator_jobs() -> None:
    [kind] = [k for k in listing.operator_kinds() if k.kind == "SparkConnect"]
    assert (kind.api_version, kind.plural) == ("sparkoperator.k8s.io/v1alpha1", "sparkconnects")
    [connect] = [k for k in registry.kinds() if k.kind == "SparkConnect"]
    assert connect.workload.operator == "spark-operator"


def test_job_state_of_a_kubeflow_job_is_its_latest_true_condition() -> None:
    conditions = [
        {"type": "Created", "status": "True"},
        {"type": "Running", "status": "False"},
        {"type": "Succeeded", "status": "True"},
    ]
    assert listing.job_state({"status": {"conditions": conditions}}) == "Succeeded"
    assert listing.job_state({"status": {"conditions": conditions[:2]}}) == "Created"
    assert listing.job_state({}) == ""


def test_every_version_of_a_kind_is_asked_for() -> None:
    asked = [(k.kind, k.api_version) for k in listing.operator_kinds()]
    assert ("MPIJob", "kubeflow.org/v1") in asked and ("MPIJob", "kubeflow.org/v2beta1") in asked
    assert asked.index(("MPIJob", "kubeflow.org/v1")) + 1 == asked.index(("MPIJob", "kubeflow.org/v2beta1"))


def test_mpi_operators_v2beta1_mpijobs_are_operator_jobs_with_their_operator_named() -> None:
    mpi = kubeflow.mpijob("pi")  # v2beta1, as mpi-operator serves it
    mpi["metadata"]["namespace"] = "seed"
    *_, operators = listing.tables([mpi])
    assert [(o["apiVersion"], o["kind"], listing.job_state(o)) for o in operators.items] == [
        ("kubeflow.org/v2beta1", "MPIJob", "")
    ]
    assert listing.hints([operators]) == [
        "note: 1 MPIJob(s) without status: their PodGroups wait for pods only the training-operator (MPIJob v1) "
        "or mpi-operator (v2beta1) creates; is it running? (`vbridge up --with-operators` runs it locally)"
    ]


def test_one_object_read_at_two_versions_is_one_row() -> None:
    v1 = {"apiVersion": "kubeflow.org/v1", "kind": "MPIJob", "metadata": {"name": "pi", "uid": "u1"}}
    v2 = {**v1, "apiVersion": "kubeflow.org/v2beta1"}
    other = {**v1, "metadata": {"name": "other", "uid": "u2"}}
    assert listing.once([v1, v2, other]) == [v1, other]
