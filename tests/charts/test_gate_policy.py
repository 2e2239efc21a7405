"""The chart's scheduling-gate policy: rendered in every combination from ``bridge.gates`` (one
source with the local control plane's copy), bound with ``Deny``, and the right to lift granted
to the controllers and, where it runs, our scheduler, cluster-wide and to no one else. (kubeconform
and the server-side dry run of every rendered document are in ``test_chart``.)"""

from __future__ import annotations

import pathlib

import pytest

from bridge import gates
from tests.support import helmchart

NAME = f"{helmchart.RELEASE}-scheduling-gates"


def _account(component: str) -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": f"{helmchart.RELEASE}-{component}", "namespace": helmchart.NAMESPACE}


@pytest.mark.parametrize("combo", sorted(helmchart.COMBOS))
def test_the_policy_and_who_may_lift_are_rendered(helm: pathlib.Path, ca_file: pathlib.Path, combo: str) -> None:
    rendered = helmchart.render(helm, combo, ca_file)
    policy = rendered.one("ValidatingAdmissionPolicy", NAME)
    want, _ = gates.objects(NAME)
    assert policy["spec"] == want["spec"]
    assert policy["metadata"]["labels"]["app.kubernetes.io/instance"] == helmchart.RELEASE
    binding = rendered.one("ValidatingAdmissionPolicyBinding", NAME)
    assert binding["spec"] == {"policyName": NAME, "validationActions": ["Deny"]}

    # who may lift: the controllers (the Spark driver gate) and our scheduler where it runs, each
    # in its own ClusterRole (bound cluster-wide to its own account), and no one else
    lifters = sorted(
        role["metadata"]["name"]
        for role in rendered.all("ClusterRole") + rendered.all("Role")
        for rule in role.get("rules") or []
        if gates.LIFT[2] in rule.get("verbs", []) or "*" in rule.get("verbs", [])
    )
    assert lifters == (["vb-controllers"] if combo == "external" else ["vb-controllers", "vb-scheduler"])
    for name in lifters:
        assert gates.lifter_rule() in rendered.one("ClusterRole", name)["rules"]
        binding = rendered.one("ClusterRoleBinding", name)
        assert binding["subjects"] == [_account(name.removeprefix(f"{helmchart.RELEASE}-"))]
