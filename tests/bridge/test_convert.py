"""Old Kubeflow APIs convert to today's, and `vbridge translate` shows the whole outcome offline."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from bridge import convert, errors
from vbridge import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_tfjob_v1alpha1_becomes_v1() -> None:
    old = yaml.safe_load((ROOT / "examples" / "tfjob-v1alpha1.yaml").read_text())
    old["spec"]["tfImage"] = "tf:1"
    new, notes = convert.to_current(old)
    assert (new["apiVersion"], new["kind"]) == ("kubeflow.org/v1", "TFJob")
    specs = new["spec"]["tfReplicaSpecs"]
    assert {r: s["replicas"] for r, s in specs.items()} == {"Master": 1, "Worker": 1, "PS": 2}
    assert specs["PS"]["restartPolicy"] == "OnFailure"
    assert "restartPolicy" not in specs["PS"]["template"]["spec"]
    assert specs["Worker"]["template"]["spec"]["containers"][0]["ports"] == [
        {"name": "tfjob-port", "containerPort": 2222}
    ]
    assert notes == ["spec.tfImage has no equivalent in kubeflow.org/v1 and was dropped"]
    assert new == yaml.safe_load((ROOT / "examples" / "tfjob-v1.yaml").read_text()) | {
        "metadata": {"name": "example-job"}
    }


def test_mpijob_v1alpha2_becomes_training_operator_v1() -> None:
    new, _ = convert.to_current(yaml.safe_load((ROOT / "examples" / "mpijob-v1alpha2.yaml").read_text()))
    assert (new["apiVersion"], new["kind"]) == ("kubeflow.org/v1", "MPIJob")
    assert new["spec"]["runPolicy"] == {"cleanPodPolicy": "Running"} and new["spec"]["slotsPerWorker"] == 1
    assert set(new["spec"]["mpiReplicaSpecs"]) == {"Launcher", "Worker"}


def test_bad_old_objects_are_clear_errors() -> None:
    with pytest.raises(errors.InvalidObjectError, match="tfReplicaType 'BOSS'"):
        convert.to_current(
            {
                "apiVersion": "kubeflow.org/v1alpha1",
                "kind": "TFJob",
                "spec": {"replicaSpecs": [{"tfReplicaType": "BOSS"}]},
            }
        )
    with pytest.raises(errors.InvalidObjectError, match="two WORKER entries"):
        convert.to_current(
            {
                "apiVersion": "kubeflow.org/v1alpha1",
                "kind": "TFJob",
                "spec": {"replicaSpecs": [{"tfReplicaType": "WORKER"}, {"tfReplicaType": "worker"}]},
            }
        )
    current = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob"}
    assert convert.to_current(current) == (current, [])


def test_translate_command_prints_patch_and_podgroup(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["translate", str(ROOT / "examples" / "mpijob-v1alpha2.yaml")]) == 0
    out = capsys.readouterr().out
    docs = [d for d in yaml.safe_load_all(out) if d]
    job, group = docs
    assert (
        job["apiVersion"] == "kubeflow.org/v1"
        and job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"] == "volcano"
    )
    # v1 (training-operator): the launcher counts, resources from limits
    assert group["spec"] == {
        "minMember": 3,
        "queue": "default",
        "minTaskMember": {"launcher": 1, "worker": 2},
        "minResources": {"cpu": "5", "memory": "10Gi"},
    }
    assert "# patch (4 operations" in out


def test_translate_command_reports_not_ours_and_denials(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        yaml.safe_dump_all(
            [
                yaml.safe_load((ROOT / "examples" / "sparkapplication-pi.yaml").read_text()),
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "TFJob",
                    "metadata": {"name": "x"},
                    "spec": {"tfReplicaSpecs": {"Worker": {"replicas": -3}}},
                },
            ]
        )
    )
    assert cli.main(["translate", str(manifest), "--explain-skipped"]) == 1
    out = capsys.readouterr().out
    assert "SparkApplication spark-pi: a SparkApplication without batchScheduler volcano" in out
    assert "# DENIED: tfReplicaSpecs.Worker.replicas must be a non-negative integer, got -3" in out
    assert cli.main(["translate", str(manifest), "--namespace-label", "vbridge.io/gang-scheduling=enabled"]) == 1
    assert "spark-spark-pi-pg" in capsys.readouterr().out
