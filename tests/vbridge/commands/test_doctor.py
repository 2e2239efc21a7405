"""``vbridge doctor``'s verdicts from objects alone, its output, and the kubectl plugin entry."""

from __future__ import annotations

import datetime
import json
import pathlib
from typing import Any

import pytest
import yaml

from bridge import errors
from vbridge import cli
from vbridge.commands import doctor
from vbridge.commands import doctor_checks as checks

NOW = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)


def deployment(name: str, args: list[str], *, labels: dict[str, str] | None = None, **status: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": labels or {}},
        "spec": {"replicas": status.pop("replicas", 1), "template": {"spec": {"containers": [{"args": args}]}}},
        "status": status,
    }


def crd(name: str, version: str, *, ours: bool = True) -> dict[str, Any]:
    labels = {"app.kubernetes.io/part-of": "volcano-bridge"} if ours else {}
    return {"metadata": {"name": name, "labels": labels}, "spec": {"versions": [{"name": version, "served": True}]}}


def webhook_config(
    *, ca: str = "Y2E=", service: bool = True, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    cc: dict[str, Any] = {"caBundle": ca}
    cc.update({"service": {"namespace": "vb", "name": "vb-webhook"}} if service else {"url": "https://h:1/mutate/x"})
    return {
        "metadata": {"annotations": annotations or {}},
        "webhooks": [{"name": "tfjob.kubeflow.org.vbridge.io", "clientConfig": cc}],
    }


# apiserver


@pytest.mark.parametrize(("minor", "verdict"), [("26", "FAIL"), ("28", "WARN"), ("31+", "OK")])
def test_apiserver_version(minor: str, verdict: str) -> None:
    check = checks.apiserver({"gitVersion": f"v1.{minor}.0", "minor": minor}, "https://k")
    assert check.verdict == verdict
    assert check.message == f"reachable at https://k: Kubernetes v1.{minor}.0"


# CRDs


def test_crds_none_is_a_warning_some_is_a_failure() -> None:
    assert checks.crds({}).verdict == "WARN"
    some = checks.crds({"podgroups.scheduling.volcano.sh": crd("podgroups", "v1beta1")})
    assert some.verdict == "FAIL"
    assert some.message == "missing: queues.scheduling.volcano.sh, jobs.batch.volcano.sh"


def test_crds_ours_or_volcanos_and_the_versions_we_read() -> None:
    found = {name: crd(name, version, ours=name != "jobs.batch.volcano.sh") for name, version in checks.CRDS.items()}
    check = checks.crds(found)
    assert check.verdict == "OK" and check.message.startswith("present (Volcano's and ours)")
    found["podgroups.scheduling.volcano.sh"] = crd("podgroups", "v1alpha1")
    old = checks.crds(found)
    assert old.verdict == "FAIL" and old.message == "podgroups.scheduling.volcano.sh does not serve v1beta1"


# an existing Volcano


def test_volcano_found_by_name_or_label_with_its_scheduler_names() -> None:
    found = checks.find_volcano(
        [
            deployment("vc-scheduler", ["--scheduler-name", "volcano", "--scheduler-name=batch"]),
            deployment("my-controllers", [], labels={"app": "volcano-controller"}),
            deployment("volcano-admission", []),
            deployment(
                "vb-scheduler", [], labels={"app.kubernetes.io/name": "volcano-bridge", "app": "volcano-scheduler"}
            ),
        ]
    )
    assert found.components == {
        "scheduler": "ns/vc-scheduler",
        "controllers": "ns/my-controllers",
        "webhook": "ns/volcano-admission",
    }
    assert found.scheduler_names == ("volcano", "batch")
    assert checks.find_volcano([deployment("vc-scheduler", ["--v=3"])]).scheduler_names == ("volcano",)


def test_volcano_verdicts() -> None:
    none: dict[str, Any] = {"webhook": None, "controllers": None, "scheduler": None}
    assert checks.volcano(checks.Volcano({}), none, "volcano").verdict == "OK"
    vc = checks.Volcano({"scheduler": "v/vc-scheduler", "controllers": "v/vc-controller-manager"}, ("volcano",))
    before = checks.volcano(vc, none, "volcano")
    assert before.verdict == "WARN" and "volcano.external=true" in before.fix
    ours = {"webhook": deployment("w", []), "controllers": deployment("c", []), "scheduler": deployment("s", [])}
    both = checks.volcano(vc, ours, "volcano")
    assert both.verdict == "FAIL" and "same schedulerName 'volcano'" in both.message
    assert checks.volcano(vc, ours, "bridge").verdict == "FAIL"  # other name, but both run Volcano Jobs
    beside = {**ours, "scheduler": None, "controllers": deployment("c", ["controllers", "--no-vcjobs"])}
    ok = checks.volcano(vc, beside, "volcano")
    assert ok.verdict == "OK" and ok.message.startswith("beside Volcano: controllers v/vc-controller-manager")


# cert-manager


def test_cert_manager() -> None:
    assert checks.cert_manager({"metadata": {}}, None).verdict == "OK"
    assert checks.cert_manager(None, webhook_config()).verdict == "OK"
    asks = webhook_config(annotations={"cert-manager.io/inject-ca-from": "vb/vb-webhook"})
    assert checks.cert_manager(None, asks).verdict == "FAIL"


# operators' own gang flags


def test_operator_gang_flags() -> None:
    off = [
        deployment("spark-operator", ["--enable-batch-scheduler=false"]),
        deployment("mpi-operator", ["--gang-scheduling=none"]),
        deployment("web", ["--port=80"]),
    ]
    assert checks.operators(off).verdict == "OK"
    on = [
        deployment("spark-operator", ["controller", "start", "--enable-batch-scheduler"]),
        deployment("training-operator", ["--gang-scheduler-name", "volcano"]),
        deployment("mpi-operator", ["--gang-scheduling=volcano"]),
    ]
    check = checks.operators(on, 3)
    assert check.verdict == "WARN"
    for part in (
        "ns/spark-operator (--enable-batch-scheduler=true)",
        "ns/training-operator (--gang-scheduler-name=volcano)",
        "ns/mpi-operator (--gang-scheduling=volcano)",
        "3 SparkApplication(s) set spec.batchScheduler",
    ):
        assert part in check.message


# our Deployments


def test_components() -> None:
    absent = checks.components({"webhook": None, "scheduler": None}, external=False, namespace="vb")
    assert absent.verdict == "WARN"
    ready = {c: deployment(f"vb-{c}", [], replicas=2, readyReplicas=2) for c in ("webhook", "controllers", "scheduler")}
    assert checks.components(ready, external=False, namespace="vb").verdict == "OK"
    beside = {**ready, "scheduler": None}
    assert checks.components(beside, external=True, namespace="vb").verdict == "OK"
    broken = checks.components(
        {**beside, "webhook": deployment("vb-webhook", [], replicas=2, readyReplicas=1)}, external=False, namespace="vb"
    )
    assert broken.verdict == "FAIL" and broken.message == "missing: scheduler; vb-webhook 1/2 ready"


# the webhook registration


def test_webhook_registration() -> None:
    assert checks.webhook(None, None, "vb").verdict == "WARN"
    assert checks.webhook(webhook_config(ca=""), [], "vb").verdict == "FAIL"
    by_url = checks.webhook(webhook_config(service=False), None, "vb")
    assert (by_url.verdict, by_url.message) == ("OK", "1 webhooks registered by URL https://h:1")
    unready = [{"endpoints": [{"conditions": {"ready": False}}]}]
    assert checks.webhook(webhook_config(), unready, "vb").verdict == "FAIL"
    ready = checks.webhook(webhook_config(), [{"endpoints": [{"conditions": {"ready": True}}, {}]}], "vb")
    assert ready.verdict == "OK" and ready.message.endswith("service vb/vb-webhook: 2 ready endpoint(s)")


def test_dry_run_verdicts() -> None:
    stamped = {
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"template": {"metadata": {"annotations": {"scheduling.k8s.io/group-name": "p"}}}}
            }
        }
    }
    assert checks.dry_run("TFJob", stamped, None).verdict == "OK"
    assert checks.dry_run("TFJob", {"spec": {"tfReplicaSpecs": {"Worker": {}}}}, None).verdict == "FAIL"
    vcjob = {"spec": {"minAvailable": 1, "tasks": [{"name": "default0"}]}}
    assert checks.dry_run("Volcano Job", vcjob, None).verdict == "OK"
    assert checks.dry_run("Volcano Job", {"spec": {"tasks": [{}]}}, None).verdict == "FAIL"
    denied = errors.ApiError(
        403, "Forbidden", "admission webhook \"x\" denied the request: queue 'default' does not exist"
    )
    assert checks.dry_run("TFJob", None, denied).verdict == "WARN"
    unreachable = errors.ApiError(500, "InternalError", 'failed calling webhook "x": connection refused')
    check = checks.dry_run("TFJob", None, unreachable)
    assert check.verdict == "FAIL" and "connection refused" in check.message


# the scheduler's Lease


def lease(holder: str | None, seconds_ago: float, duration: int = 15) -> dict[str, Any]:
    renewed = (NOW - datetime.timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"spec": {"holderIdentity": holder, "renewTime": renewed, "leaseDurationSeconds": duration}}


def test_leader() -> None:
    def verdict(obj: dict[str, Any] | None, *, expected: bool = True, external: bool = False) -> checks.Check:
        return checks.leader(obj, NOW, where="vb/volcano-scheduler", expected=expected, external=external)

    assert verdict(None).verdict == "FAIL"
    assert verdict(None, expected=False).verdict == "WARN"
    assert verdict(None, external=True).verdict == "OK"
    fresh = verdict(lease("s-0", 3))
    assert (fresh.verdict, fresh.message) == ("OK", "Lease vb/volcano-scheduler held by s-0, renewed 3 s ago")
    stale = verdict(lease("s-0", 60))
    assert stale.verdict == "FAIL" and "last renewed 60 s ago (lease 15 s): stale" in stale.message
    assert verdict(lease(None, 1)).message == "Lease vb/volcano-scheduler has no holder (released)"


# the scheduler conf


def configmap(text: str) -> dict[str, Any]:
    return {"data": {"volcano-scheduler.conf": text}}


def test_scheduler_conf() -> None:
    where = "ConfigMap vb/vb-scheduler-conf"
    assert checks.scheduler_conf(None, where=where, expected=True).verdict == "WARN"
    good = checks.scheduler_conf(
        configmap('actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: gang}]\n'), where=where, expected=True
    )
    assert (good.verdict, good.message) == ("OK", f"{where}: actions enqueue, allocate; 1 plugins")
    sla = checks.scheduler_conf(
        configmap("tiers:\n- plugins: [{name: gang}, {name: drf}, {name: sla}]\n"), where=where, expected=True
    )
    assert sla.verdict == "FAIL" and "Volcano plugin(s) sla not implemented by this scheduler" in sla.message
    bad = checks.scheduler_conf(configmap('actions: "allocate, dance"\n'), where=where, expected=True)
    assert bad.verdict == "FAIL" and "unknown action(s) dance" in bad.message


# output, exit codes and the kubectl plugin


def test_render_one_line_per_check_and_a_tally() -> None:
    out = doctor.render(
        [
            checks.Check("apiserver", "OK", "up", "never shown"),
            checks.Check("scheduler-leader", "FAIL", "no Lease", "run it"),
        ]
    )
    assert out.splitlines() == [
        "OK    apiserver         up",
        "FAIL  scheduler-leader  no Lease  -> run it",
        "1 OK, 0 WARN, 1 FAIL",
    ]


def test_unreachable_apiserver_is_one_failed_check(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    assert cli.main(["doctor", f"--kubeconfig={kubeconfig}", "-o", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    [only] = report["checks"]
    assert only["name"] == "apiserver" and only["verdict"] == "FAIL"
    assert only["message"].startswith("cannot reach http://127.0.0.1:1: ")
    assert cli.main(["doctor", f"--kubeconfig={tmp_path / 'absent'}"]) == 1
    assert capsys.readouterr().out.startswith("FAIL  apiserver  cannot read kubeconfig")


def test_kubectl_plugin_is_the_same_command_named_kubectl_vbridge(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.kubectl_main(["explain", "--help"])
    assert capsys.readouterr().out.startswith("usage: kubectl vbridge explain ")
    assert cli.kubectl_main([]) == 2
    assert capsys.readouterr().err.startswith("usage: kubectl vbridge ")
    assert cli.kubectl_main(["explain", "--kubeconfig=/absent"]) == 2
    assert capsys.readouterr().err.startswith("kubectl vbridge: error: expected KIND/NAME")
