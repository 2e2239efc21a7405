"""The Helm chart: generated parts are current, it lints, and what it renders the real apiserver accepts."""

from __future__ import annotations

import pathlib
import subprocess

import pytest
import yaml

from bridge.adapters import registry
from vbridge import chartgen
from vbridge.localcluster import binaries, cluster

CHART = chartgen.CHART


def test_generated_chart_files_are_current() -> None:
    assert chartgen.check() == [], "run `vbridge chart --write`"


def _helm(bins: binaries.Binaries) -> pathlib.Path:
    if "helm" not in bins.extras:
        pytest.skip("helm was not built (tools/build-binaries.sh builds it)")
    return bins.path("helm")


@pytest.mark.integration
def test_chart_lints_renders_and_the_apiserver_accepts_it(
    bins: binaries.Binaries, control_plane: cluster.LocalCluster, tmp_path: pathlib.Path
) -> None:
    helm = _helm(bins)
    lint = subprocess.run([str(helm), "lint", str(CHART)], capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    rendered = subprocess.run(
        [
            str(helm),
            "template",
            "vb",
            str(CHART),
            "--namespace",
            "volcano-bridge",
            "--set",
            "certManager.enabled=false",
            "--set",
            "webhook.caBundle=dGVzdA==",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    kinds = sorted(d["kind"] for d in docs)
    assert kinds.count("Deployment") == 2 and "MutatingWebhookConfiguration" in kinds
    hooks = next(d for d in docs if d["kind"] == "MutatingWebhookConfiguration")["webhooks"]
    assert [h["clientConfig"]["service"]["path"] for h in hooks] == [a.registration.path for a in registry.ADAPTERS]
    assert all(h["clientConfig"]["service"]["name"] == "vb-webhook" for h in hooks)
    assert all("volcano-bridge" in h["namespaceSelector"]["matchExpressions"][0]["values"] for h in hooks)
    out = tmp_path / "rendered.yaml"
    out.write_text(rendered)
    kubectl = [str(bins.path("kubectl")), f"--kubeconfig={control_plane.kubeconfig}"]
    subprocess.run([*kubectl, "create", "namespace", "volcano-bridge"], capture_output=True, check=False)
    applied = subprocess.run(
        [*kubectl, "apply", "--dry-run=server", "-f", str(out)], capture_output=True, text=True, check=False
    )
    assert applied.returncode == 0, applied.stderr
    assert "mutatingwebhookconfiguration.admissionregistration.k8s.io/vb created (server dry run)" in applied.stdout
