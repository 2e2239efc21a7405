"""Only we lift the Spark driver gate on the Volcano backend, with our webhook up and down; the
chart's copy of the policy lets the chart's ServiceAccounts through and no one else (``bridge.gates``).

A namespace editor (``users.editor``: the built-in ``edit`` role, by impersonation) creates a
spark-submit driver, which our webhook gates with ``keys.SPARK_GATE`` until its PodGroup exists,
then tries to lift the gate or reroute the pod with the pod ``patch`` right ``edit`` gives. The
session's control plane has the local policy in force from its start (``cluster.guard_gates``);
the chart test renders ``templates/scheduling-gates.yaml`` and ``rbac-controllers.yaml`` with
``helm template``, applies them, and stands the local copy down while it acts.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from bridge import gates, keys
from bridge.k8s import client, kubeconfigs
from tests.support import apiserver, bridgethread, gatepolicy, helmchart, users
from vbridge.localcluster import binaries, cluster

pytestmark = pytest.mark.integration
LIFTED_ONLY_BY_US = "is lifted only by volcano-bridge"
CHART_POLICY = f"{helmchart.RELEASE}-scheduling-gates"
CONTROLLERS = f"system:serviceaccount:{helmchart.NAMESPACE}:{helmchart.RELEASE}-controllers"
_ADMISSION = ("admissionregistration.k8s.io", "v1")


@pytest.fixture
def editor(
    api_client: k8s.ApiClient, control_plane: cluster.LocalCluster, namespace: str
) -> Iterator[tuple[str, k8s.ApiClient]]:
    user, as_user = users.editor(api_client, control_plane, namespace)
    try:
        yield user, as_user
    finally:
        as_user.close()


def test_an_editor_cannot_lift_the_spark_driver_gate_and_our_controllers_still_do(
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    namespace: str,
    editor: tuple[str, k8s.ApiClient],
) -> None:
    user, as_user = editor
    made = gatepolicy.driver(as_user, namespace, "pi-driver")
    assert [g["name"] for g in made["spec"]["schedulingGates"]] == [keys.SPARK_GATE]

    def tries(mode: str) -> None:
        lift = gatepolicy.lift(api_client, namespace, "pi-driver", keys.SPARK_GATE)
        message = gatepolicy.refused(as_user, namespace, "pi-driver", lift, LIFTED_ONLY_BY_US, mode)
        assert user in message and keys.SPARK_GATE in message, message
        routed = gatepolicy.set_annotation(keys.GROUP_NAME, "spark-0123-podgroup")  # a group we would make at once
        gatepolicy.refused(as_user, namespace, "pi-driver", routed, "stay as admitted", mode)
        queued = gatepolicy.set_annotation(keys.QUEUE_NAME, "default")
        gatepolicy.refused(as_user, namespace, "pi-driver", queued, "stay as admitted", mode)

    gatepolicy.each_mode(api_client, namespace, tries)
    assert gatepolicy.gates_of(api_client, namespace, "pi-driver") == [keys.SPARK_GATE]

    # Its group comes (as an operator would make it); the next event on the driver has our
    # controllers lift the gate, through the policy.
    group = {
        "apiVersion": "/".join(apiserver.PG),
        "kind": "PodGroup",
        "metadata": {"name": gatepolicy.OTHERS_GROUP},
        "spec": {"minMember": 1, "queue": "default"},
    }
    k8s.CustomObjectsApi(api_client).create_namespaced_custom_object(*apiserver.PG, namespace, "podgroups", group)
    touch = [{"op": "add", "path": "/metadata/labels/touched", "value": "yes"}]
    assert gatepolicy.refusal(as_user, namespace, "pi-driver", touch) is None
    apiserver.eventually(
        lambda: not gatepolicy.gates_of(api_client, namespace, "pi-driver"), timeout=30, what="our controllers lifting"
    )


def _apply_chart(bins: binaries.Binaries, lc: cluster.LocalCluster, *args: str) -> str:
    if "helm" not in bins.extras:
        pytest.skip("helm was not built (tools/build-binaries.sh builds it)")
    shown = ("--show-only", "templates/scheduling-gates.yaml", "--show-only", "templates/rbac-controllers.yaml")
    rendered = helmchart.run_template(bins.path("helm"), list(shown))
    assert rendered.returncode == 0, rendered.stderr
    kubectl = [str(bins.path("kubectl")), f"--kubeconfig={lc.kubeconfig}", "-n", helmchart.NAMESPACE, *args]
    done = subprocess.run([*kubectl, "-f", "-"], input=rendered.stdout, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return rendered.stdout


async def _local_policy(lc: cluster.LocalCluster, *, on: bool) -> None:
    async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
        if on:
            await cluster.guard_gates(api)
        else:
            path = f"/apis/{'/'.join(_ADMISSION)}/validatingadmissionpolicybindings/{gates.LOCAL_NAME}"
            await api.request("DELETE", path)


def test_the_charts_policy_lets_only_the_charts_service_accounts_lift(
    api_client: k8s.ApiClient,
    bins: binaries.Binaries,
    control_plane: cluster.LocalCluster,
    bridge: bridgethread.BridgeThread,
    namespace: str,
    editor: tuple[str, k8s.ApiClient],
) -> None:
    _, as_user = editor
    with contextlib.suppress(k8s.ApiException):
        k8s.CoreV1Api(api_client).create_namespace({"metadata": {"name": helmchart.NAMESPACE}})
    _apply_chart(bins, control_plane, "apply")
    cluster.run_sync(_local_policy(control_plane, on=False))
    try:
        gatepolicy.driver(as_user, namespace, "pi-driver")
        lift = gatepolicy.lift(api_client, namespace, "pi-driver", keys.SPARK_GATE)

        def refused() -> str | None:  # the chart's policy in force: it names itself in the denial
            answer = gatepolicy.refusal(as_user, namespace, "pi-driver", lift)
            return answer[1] if answer and CHART_POLICY in answer[1] else None

        assert LIFTED_ONLY_BY_US in apiserver.eventually(refused, timeout=30, what="the chart's policy refusing")
        controllers = users.impersonating(control_plane, CONTROLLERS)
        try:
            assert gatepolicy.refusal(controllers, namespace, "pi-driver", lift) is None
        finally:
            controllers.close()
        assert gatepolicy.gates_of(api_client, namespace, "pi-driver") == []
    finally:
        cluster.run_sync(_local_policy(control_plane, on=True))
        _apply_chart(bins, control_plane, "delete", "--ignore-not-found")
