"""Value combinations over ``helm template`` output: what each mode renders, and what it refuses."""

from __future__ import annotations

import base64
import pathlib
import re
from typing import Any

import pytest
import yaml

from bridge import defaults
from tests.support import helmchart

COMBOS = sorted(helmchart.COMBOS)
VALUES = yaml.safe_load((helmchart.CHART / "values.yaml").read_text())
README = (helmchart.CHART.parent / "README.md").read_text()
VOLCANO_CRDS = {
    "podgroups.scheduling.volcano.sh",
    "queues.scheduling.volcano.sh",
    "jobs.batch.volcano.sh",
    "commands.bus.volcano.sh",
}
COMPONENTS = ("webhook", "controllers", "scheduler")
HOOK = "uninstall"  # the pre-delete hook's Job (uninstallHook.enabled, on by default)


def _args(rendered: helmchart.Rendered, component: str) -> list[str]:
    deployment = rendered.one("Deployment", f"vb-{component}")
    args: list[str] = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def _leaves(tree: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, value in tree.items():
        if isinstance(value, dict) and value and key != "resources":
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append(prefix + key)
    return out


def test_value_defaults_are_the_codes_defaults() -> None:
    assert VALUES["schedulerName"] == defaults.SCHEDULER_NAME
    assert VALUES["scheduler"]["period"] == defaults.SCHEDULER_PERIOD
    assert VALUES["scheduler"]["statusQps"] == defaults.STATUS_QPS
    assert VALUES["scheduler"]["statusBurst"] == defaults.STATUS_BURST


def test_every_value_is_documented_in_the_readme() -> None:
    missing = [leaf for leaf in _leaves(VALUES) if f"`{leaf}`" not in README]
    assert len(_leaves(VALUES)) > 30 and missing == []


def test_standalone_renders_three_components_and_the_volcano_crds(helm: pathlib.Path, ca_file: pathlib.Path) -> None:
    rendered = helmchart.render(helm, "defaults", ca_file)
    assert sorted(d["metadata"]["name"] for d in rendered.all("Deployment")) == [f"vb-{c}" for c in sorted(COMPONENTS)]
    crds = rendered.all("CustomResourceDefinition")
    assert {c["metadata"]["name"] for c in crds} == VOLCANO_CRDS
    assert all(c["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep" for c in crds)
    assert rendered.all("Queue") == []  # the scheduler makes the default Queues: one owner
    assert "--no-vcjobs" not in _args(rendered, "controllers")
    assert {s["metadata"]["name"] for s in rendered.all("Service")} == {"vb-webhook", "vb-scheduler-metrics"}


def test_external_volcano_renders_no_scheduler_no_crds_and_no_vcjobs(helm: pathlib.Path, ca_file: pathlib.Path) -> None:
    rendered = helmchart.render(helm, "external", ca_file)
    assert [d["metadata"]["name"] for d in rendered.all("Deployment")] == ["vb-controllers", "vb-webhook"]
    assert rendered.all("CustomResourceDefinition") == [] and rendered.all("Queue") == []
    assert not any("scheduler" in d["metadata"]["name"] for d in rendered.docs if d["kind"] != "ClusterRole")
    assert "--no-vcjobs" in _args(rendered, "controllers")
    assert f"--scheduler-name={defaults.SCHEDULER_NAME}" in _args(rendered, "webhook")
    rules = rendered.one("ClusterRole", "vb-controllers")["rules"]
    assert not any({"batch.volcano.sh", "bus.volcano.sh"} & set(r["apiGroups"]) for r in rules)
    assert not any({"secrets", "queues/status"} & set(r["resources"]) for r in rules)
    # secrets only in the release namespace: the certificate Secret by name, and create (no name possible)
    assert [r["verbs"] for r in _role(rendered) if "resourceNames" not in r] == [["create"]]


def _role(rendered: helmchart.Rendered) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = rendered.one("Role", "vb-controllers")["rules"]
    return rules[1:]  # after the Lease


@pytest.mark.parametrize("combo", COMBOS)
def test_every_pod_runs_restricted(helm: pathlib.Path, ca_file: pathlib.Path, combo: str) -> None:
    rendered = helmchart.render(helm, combo, ca_file)
    for workload in rendered.all("Deployment") + rendered.all("Job"):
        pod = workload["spec"]["template"]["spec"]
        probed = workload["kind"] == "Deployment"  # a Job's pod runs to completion: no probes
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in pod["containers"]:
            sc = container["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
            assert sc["capabilities"] == {"drop": ["ALL"]} and sc["runAsNonRoot"] is True
            assert container["resources"]["requests"]
            assert not probed or (container["livenessProbe"] and container["readinessProbe"])
        assert pod["topologySpreadConstraints"][0]["topologyKey"] == "kubernetes.io/hostname"


@pytest.mark.parametrize("combo", COMBOS)
def test_every_service_account_is_bound_only_to_its_own_roles(
    helm: pathlib.Path, ca_file: pathlib.Path, combo: str
) -> None:
    rendered = helmchart.render(helm, combo, ca_file)
    accounts = {d["metadata"]["name"] for d in rendered.all("ServiceAccount")}
    components = [c for c in COMPONENTS if combo != "external" or c != "scheduler"]
    assert accounts == {f"vb-{c}" for c in [*components, HOOK]}
    bindings = rendered.all("ClusterRoleBinding") + rendered.all("RoleBinding")
    for binding in bindings:
        assert [s["name"] for s in binding["subjects"]] == [binding["roleRef"]["name"]]
        assert binding["subjects"][0]["namespace"] == helmchart.NAMESPACE
    for account in accounts:
        workload = rendered.one("Job" if account == f"vb-{HOOK}" else "Deployment", account)
        assert workload["spec"]["template"]["spec"]["serviceAccountName"] == account
        assert any(b["subjects"][0]["name"] == account for b in bindings)


def _grants(rendered: helmchart.Rendered, component: str) -> set[tuple[str, str, str]]:
    roles = [r for r in rendered.all("Role") if r["metadata"]["name"] == f"vb-{component}"]
    rules = [*rendered.one("ClusterRole", f"vb-{component}")["rules"], *(r for role in roles for r in role["rules"])]
    return {(g, res, v) for r in rules for g in r["apiGroups"] for res in r["resources"] for v in r["verbs"]}


def test_least_privilege_per_component(helm: pathlib.Path, ca_file: pathlib.Path) -> None:
    rendered = helmchart.render(helm, "defaults", ca_file)
    webhook, controllers, scheduler = (_grants(rendered, c) for c in COMPONENTS)
    assert {v for _, _, v in webhook} == {"list", "watch"}  # what admission decides with, from its caches
    assert ("", "pods/binding", "create") in scheduler
    assert not any(res == "pods/binding" for _, res, _ in webhook | controllers)
    assert not any(res == "secrets" for _, res, _ in webhook | scheduler)
    assert any(res == "secrets" for _, res, _ in controllers)
    assert ("coordination.k8s.io", "leases", "update") in controllers & scheduler
    # vcctl's Commands: the controllers carry them out and delete them; they never make one.
    assert {v for g, res, v in controllers if res == "commands"} == {
        "list",
        "watch",
        "delete",
    }  # watched, not read one by one
    # ... and only for what their author may update: one SubjectAccessReview each, nothing else of authorization.
    assert {(g, res, v) for g, res, v in controllers if g == "authorization.k8s.io"} == {
        ("authorization.k8s.io", "subjectaccessreviews", "create")
    }
    cluster_wide = [r for c in COMPONENTS for r in rendered.one("ClusterRole", f"vb-{c}")["rules"]]
    assert not any("leases" in r["resources"] for r in cluster_wide)  # a Role: the release namespace only
    for grants in (webhook, controllers, scheduler):
        assert not any(v in ("*", "escalate", "bind", "impersonate") or res == "*" for _, res, v in grants)
        events = {v for _, res, v in grants if res == "events"}
        assert events in (set(), {"create"})  # bridge/k8s/events.py only creates


def test_self_mode_scopes_the_cert_secret_and_webhook_configuration_by_name(
    helm: pathlib.Path, ca_file: pathlib.Path
) -> None:
    rendered = helmchart.render(helm, "defaults", ca_file)
    mwc = [
        r
        for r in rendered.one("ClusterRole", "vb-controllers")["rules"]
        if "mutatingwebhookconfigurations" in r["resources"]
    ]
    assert mwc == [
        {
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["mutatingwebhookconfigurations"],
            "resourceNames": ["vb"],
            "verbs": ["get", "patch"],
        }
    ]
    assert {"resources": ["secrets"], "resourceNames": ["vb-webhook-tls"]}.items() <= _role(rendered)[0].items()
    args = _args(rendered, "controllers")
    assert {
        "--manage-certs",
        "--cert-secret=vb-webhook-tls",
        "--webhook-config=vb",
        "--webhook-service=vb-webhook",
    } <= set(args)
    assert all(
        "caBundle" not in h["clientConfig"] for h in rendered.one("MutatingWebhookConfiguration", "vb")["webhooks"]
    )
    for combo in ("cert-manager", "secret"):
        other = helmchart.render(helm, combo, ca_file)
        assert "--manage-certs" not in _args(other, "controllers")
        assert not any(
            "mutatingwebhookconfigurations" in r["resources"]
            for r in other.one("ClusterRole", "vb-controllers")["rules"]
        )


def test_secret_mode_injects_the_given_ca(helm: pathlib.Path, ca_file: pathlib.Path) -> None:
    rendered = helmchart.render(helm, "secret", ca_file)
    hooks = rendered.one("MutatingWebhookConfiguration", "vb")["webhooks"]
    assert {base64.b64decode(h["clientConfig"]["caBundle"]) for h in hooks} == {ca_file.read_bytes()}
    volumes = rendered.one("Deployment", "vb-webhook")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "tls", "secret": {"secretName": "my-tls"}} in volumes


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--set", "certificates.mode=secret"], "certificates.mode=secret needs certificates.caBundle"),
        (["--set", "certificates.mode=secret", "--set", "certificates.caBundle=dGVzdA=="], "must be a PEM certificate"),
        (["--set", "certificates.mode=cert-manager"], "this cluster has no cert-manager"),
        (["--set", "certificates.mode=bogus"], "value must be one of 'self', 'cert-manager', 'secret'"),
    ],
)
def test_unsafe_certificate_values_refuse_to_render(helm: pathlib.Path, flags: list[str], message: str) -> None:
    proc = helmchart.run_template(helm, flags)
    assert proc.returncode != 0 and message in proc.stderr and 'caBundle: ""' not in proc.stdout


def test_cert_manager_mode_renders_issuer_certificate_and_injection(helm: pathlib.Path, ca_file: pathlib.Path) -> None:
    rendered = helmchart.render(helm, "cert-manager", ca_file)
    cert = rendered.one("Certificate", "vb-webhook")
    assert cert["spec"]["secretName"] == "vb-webhook-tls" and cert["spec"]["issuerRef"]["name"] == "vb-selfsigned"
    assert "vb-webhook.volcano-bridge.svc" in cert["spec"]["dnsNames"]
    mwc = rendered.one("MutatingWebhookConfiguration", "vb")
    assert mwc["metadata"]["annotations"] == {"cert-manager.io/inject-ca-from": "volcano-bridge/vb-webhook"}
    issuer = [
        "--set",
        "certificates.certManager.issuerRef.name=corp-ca",
        "--set",
        "certificates.certManager.issuerRef.kind=ClusterIssuer",
    ]
    own = helmchart.render(helm, "cert-manager", ca_file, *issuer)
    assert own.all("Issuer") == [] and own.one("Certificate", "vb-webhook")["spec"]["issuerRef"] == {
        "name": "corp-ca",
        "kind": "ClusterIssuer",
    }


def test_placement_values_reach_the_pods(helm: pathlib.Path, ca_file: pathlib.Path) -> None:
    rendered = helmchart.render(helm, "placement", ca_file)
    webhook = rendered.one("Deployment", "vb-webhook")
    pod = webhook["spec"]["template"]["spec"]
    assert webhook["spec"]["replicas"] == 3
    assert pod["nodeSelector"] == {"pool": "infra"} and pod["tolerations"][0]["key"] == "dedicated"
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert "affinity" in rendered.one("Deployment", "vb-scheduler")["spec"]["template"]["spec"]
    assert rendered.one("PodDisruptionBudget", "vb-webhook")["spec"]["maxUnavailable"] == 1
    single = helmchart.render(helm, "defaults", ca_file, "--set", "webhook.replicas=1")
    assert single.all("PodDisruptionBudget") == []


def test_the_interface_flags_are_rendered(helm: pathlib.Path, ca_file: pathlib.Path) -> None:
    rendered = helmchart.render(helm, "defaults", ca_file)
    assert _args(rendered, "webhook")[:2] == ["serve", "--webhook-only"]
    assert _args(rendered, "controllers")[:3] == ["controllers", "--leader-elect", "--lease-namespace=$(POD_NAMESPACE)"]
    scheduler = _args(rendered, "scheduler")
    assert {"--metrics-host=0.0.0.0", "--metrics-port=8080", "--conf=/conf/volcano-scheduler.conf"} <= set(scheduler)
    assert not any(re.match(r"--kubeconfig", a) for c in COMPONENTS for a in _args(rendered, c))


@pytest.mark.parametrize(("value", "flag"), [("period", "--period"), ("statusQps", "--status-qps")])
def test_the_scheduler_s_decimal_values_take_a_set_flag(
    helm: pathlib.Path, ca_file: pathlib.Path, value: str, flag: str
) -> None:
    # `--set` hands helm "0.5" as a string; `--set-json` and values files a number: both render.
    for how in ("--set", "--set-json"):
        rendered = helmchart.render(helm, "defaults", ca_file, how, f"scheduler.{value}=0.5")
        assert f"{flag}=0.5" in _args(rendered, "scheduler")
    for bad in ("abc", "0", "-1", "1e400x"):
        proc = helmchart.run_template(helm, ["--set", f"scheduler.{value}={bad}"])
        assert proc.returncode != 0 and value in proc.stderr, (bad, proc.stderr)


def test_the_scheduler_s_status_writes_are_paced_as_the_values_say(helm: pathlib.Path, ca_file: pathlib.Path) -> None:
    scheduler = _args(helmchart.render(helm, "defaults", ca_file), "scheduler")
    assert f"--status-qps={defaults.STATUS_QPS:g}" in scheduler
    assert f"--status-burst={defaults.STATUS_BURST}" in scheduler
    # A whole number of any size renders as one (helm reads numbers as floats: 1e+06 otherwise).
    rendered = helmchart.render(helm, "defaults", ca_file, "--set-json", "scheduler.statusBurst=1000000")
    assert "--status-burst=1000000" in _args(rendered, "scheduler")
    for bad in ("0", "-1", "abc", "1.5"):
        proc = helmchart.run_template(helm, ["--set-json", f"scheduler.statusBurst={bad}"])
        assert proc.returncode != 0 and "statusBurst" in proc.stderr, (bad, proc.stderr)


def test_user_roles_aggregate_into_view_and_edit(helm: pathlib.Path, ca_file: pathlib.Path) -> None:
    rendered = helmchart.render(helm, "defaults", ca_file)
    view, edit = rendered.one("ClusterRole", "vb-view"), rendered.one("ClusterRole", "vb-edit")
    assert view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
    assert edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert {v for r in view["rules"] for v in r["verbs"]} == {"get", "list", "watch"}
    assert "queues" not in {res for r in edit["rules"] for res in r["resources"]}
    # Commands: made and withdrawn, never changed (admission holds author, action and target).
    assert {v for r in edit["rules"] if "commands" in r["resources"] for v in r["verbs"]} == {"create", "delete"}
    off = helmchart.render(helm, "defaults", ca_file, "--set", "rbac.userRoles=false")
    assert {c["metadata"]["name"] for c in off.all("ClusterRole")} == {f"vb-{c}" for c in [*COMPONENTS, HOOK]}


@pytest.mark.parametrize("combo", ["defaults", "external"])
def test_the_uninstall_hook_stops_the_release_before_helm_deletes_its_rights(
    helm: pathlib.Path, ca_file: pathlib.Path, combo: str
) -> None:
    rendered = helmchart.render(helm, combo, ca_file)
    deployments = sorted(d["metadata"]["name"] for d in rendered.all("Deployment"))
    hooked = [d for d in rendered.docs if d["metadata"]["name"] == f"vb-{HOOK}"]
    assert sorted(d["kind"] for d in hooked) == sorted(
        ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Job"]
    )
    for d in hooked:  # every piece a pre-delete hook, the rights before the Job, all gone once it succeeded
        notes = d["metadata"]["annotations"]
        assert notes["helm.sh/hook"] == "pre-delete"
        assert notes["helm.sh/hook-weight"] == ("0" if d["kind"] == "Job" else "-10")
        assert notes["helm.sh/hook-delete-policy"] == "before-hook-creation,hook-succeeded"
    # Its rights: by name only, the release's own Deployments and webhook configuration.
    [role] = [d for d in hooked if d["kind"] == "Role"]
    [rule] = role["rules"]
    assert (rule["apiGroups"], rule["resources"], rule["verbs"]) == (["apps"], ["deployments"], ["get", "delete"])
    assert sorted(rule["resourceNames"]) == deployments
    [cluster_role] = [d for d in hooked if d["kind"] == "ClusterRole"]
    assert [(r["resources"], r["resourceNames"], r["verbs"]) for r in cluster_role["rules"]] == [
        (["mutatingwebhookconfigurations"], ["vb"], ["delete"])
    ]
    [job] = [d for d in hooked if d["kind"] == "Job"]
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == "stop" and "--webhook-config=vb" in args
    assert sorted(a.split("=", 1)[1] for a in args if a.startswith("--deployment=")) == deployments
    off = helmchart.render(helm, combo, ca_file, "--set", "uninstallHook.enabled=false")
    assert not [d for d in off.docs if d["metadata"]["name"] == f"vb-{HOOK}"]
