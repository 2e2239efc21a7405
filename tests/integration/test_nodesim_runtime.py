"""Simulated nodes that run the pods of our image for real (``vbridge.nodesim.runtime``).

On a control plane of its own (whose apiserver reaches webhook Services through their
endpoints: ``endpoint_routing``), a runtime node with its own network namespace
(``tests/support/netns.py``) runs ``vbridge serve`` from a Pod: its volumes (a Secret with the
serving certificate, a ConfigMap, the service-account token), its env, its readiness probe.
The apiserver reaches it through a Service, as the webhook the Helm chart registers.
"""

from __future__ import annotations

import base64
import os
import pathlib
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.support import apiserver, netns, runtimepods, runtimesim
from vbridge.localcluster import binaries, cluster
from vbridge.localcluster import certs as cluster_certs
from vbridge.nodesim import nodes

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def routed(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.LocalCluster]:
    lc = cluster.LocalCluster(tmp_path_factory.mktemp("routed"), bins=bins, endpoint_routing=True)
    lc.start()
    try:
        yield lc
    finally:
        lc.stop()


@pytest.fixture(scope="module")
def node_net() -> Iterator[netns.NodeNetwork]:
    if os.geteuid() != 0:
        pytest.skip("network and mount namespaces need root")
    net = netns.NodeNetwork.create("0")
    try:
        yield net
    finally:
        net.delete()


@pytest.fixture(scope="module")
def sim(
    routed: cluster.LocalCluster, node_net: netns.NodeNetwork, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[runtimesim.RuntimeSimThread]:
    thread = runtimesim.RuntimeSimThread(
        routed.kubeconfig,
        [nodes.NodeSpec(runtimepods.NODE, cpu="8", memory="16Gi")],
        workdir=tmp_path_factory.mktemp("kubelet"),
        nets={runtimepods.NODE: node_net.node_net()},
    ).start()
    try:
        yield thread
    finally:
        thread.stop()


@pytest.fixture(scope="module")
def api(routed: cluster.LocalCluster) -> Iterator[k8s.ApiClient]:
    client = k8s_config.new_client_from_config(config_file=str(routed.kubeconfig))
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def ns(api: k8s.ApiClient, request: pytest.FixtureRequest) -> Iterator[str]:
    name = f"rt-{request.node.name.split('_')[-1][:20]}-{os.getpid() % 10000}"
    k8s.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    try:
        yield name
    finally:
        k8s.CoreV1Api(api).delete_namespace(name)


def _pod(api: k8s.ApiClient, ns: str, name: str) -> k8s.V1Pod | None:
    try:
        pod: k8s.V1Pod = k8s.CoreV1Api(api).read_namespaced_pod(name, ns)
        return pod
    except k8s.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _ready(pod: k8s.V1Pod | None) -> bool:
    return bool(pod and any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or []))


def _container(sim: runtimesim.RuntimeSimThread, uid: str, index: int = 0) -> Any:
    assert sim.runtime is not None
    return sim.runtime._pods[uid].containers[index]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.timeout(240)
def test_serve_pod_runs_ready_as_its_service_account_behind_a_service_and_stops_gracefully(
    routed: cluster.LocalCluster,
    sim: runtimesim.RuntimeSimThread,
    api: k8s.ApiClient,
    ns: str,
    tmp_path: pathlib.Path,
) -> None:
    core, rbac = k8s.CoreV1Api(api), k8s.RbacAuthorizationV1Api(api)
    core.create_namespaced_service_account(ns, {"metadata": {"name": runtimepods.SA}})
    rbac.create_cluster_role({"metadata": {"name": f"{ns}-serve"}, "rules": runtimepods.RULES})
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": f"{ns}-serve"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{ns}-serve"},
            "subjects": [{"kind": "ServiceAccount", "name": runtimepods.SA, "namespace": ns}],
        }
    )
    ca = cluster_certs.KeyPair(cert=routed.workdir / "pki" / "ca.crt", key=routed.workdir / "pki" / "ca.key")
    host = f"vb-webhook.{ns}.svc"
    serving = cluster_certs.issue_from(ca, tmp_path, "webhook", common_name=host, hosts=(host,))
    tls = {"tls.crt": _b64(serving.cert.read_bytes()), "tls.key": _b64(serving.key.read_bytes())}
    core.create_namespaced_secret(ns, {"metadata": {"name": "webhook-tls"}, "type": "kubernetes.io/tls", "data": tls})
    core.create_namespaced_secret(ns, {"metadata": {"name": "words"}, "data": {"word": _b64(b"swordfish")}})
    core.create_namespaced_config_map(ns, {"metadata": {"name": "settings"}, "data": {"greeting": "hello"}})

    created = time.monotonic()
    uid = core.create_namespaced_pod(ns, runtimepods.serve_pod(ns)).metadata.uid
    pod = apiserver.eventually(lambda: (p := _pod(api, ns, "webhook")) and _ready(p) and p, 90, "the pod Ready")
    seen_ready = time.monotonic() - created
    assert pod.status.phase == "Running" and pod.status.pod_ip in netns_ips(sim)
    status = pod.status.container_statuses[0]
    assert status.ready and status.state.running and status.restart_count == 0
    assert sim.runtime is not None
    timing = sim.runtime.timings[uid]
    print(
        f"pod start: Running after {timing.running:.2f} s, Ready after {timing.ready:.2f} s (runtime clock); "
        f"Ready seen by the client after {seen_ready:.2f} s"
    )

    # The process: its env, its volumes at their mountPaths, its token (bound to the pod).
    proc = _container(sim, uid).proc
    environ = dict(
        item.split("=", 1) for item in pathlib.Path(f"/proc/{proc.pid}/environ").read_text().split("\0") if "=" in item
    )
    assert (environ["MY_NS"], environ["MY_IP"], environ["MY_SA"]) == (ns, pod.status.pod_ip, runtimepods.SA)
    assert (environ["GREETING"], environ["SECRET_WORD"], environ["SAID"]) == ("hello", "swordfish", f"hello from {ns}")
    assert environ["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    root = pathlib.Path(f"/proc/{proc.pid}/root")
    assert (root / "tls/tls.crt").read_bytes() == serving.cert.read_bytes()
    assert (root / "tls/tls.key").stat().st_mode & 0o777 == 0o400
    assert (root / "etc/vbridge-sim/settings/g.txt").read_text() == "hello"
    assert not pathlib.Path("/etc/vbridge-sim").exists() and not pathlib.Path("/tls").exists()  # host untouched
    # /var/run is a symlink to /run, which /proc/PID/root would resolve against our root, not the pod's
    sa_dir = root / os.path.realpath("/var/run/secrets/kubernetes.io/serviceaccount").lstrip("/")
    assert (sa_dir / "namespace").read_text() == ns
    assert (sa_dir / "ca.crt").read_bytes() == ca.cert.read_bytes()
    review = k8s.AuthenticationV1Api(api).create_token_review({"spec": {"token": (sa_dir / "token").read_text()}})
    assert review.status.authenticated and review.status.user.username == f"system:serviceaccount:{ns}:{runtimepods.SA}"
    assert review.status.user.extra["authentication.kubernetes.io/pod-name"] == ["webhook"]
    log = _log(sim, uid)
    assert "403" not in log and "Forbidden" not in log, log

    # A ConfigMap change reaches the mounted file (as the kubelet's resync does).
    core.patch_namespaced_config_map("settings", ns, {"data": {"greeting": "bonjour"}})
    apiserver.eventually(
        lambda: (root / "etc/vbridge-sim/settings/g.txt").read_text() == "bonjour", 20, "the updated ConfigMap file"
    )

    # So does a rotated certificate in the Secret (the process itself reads it at start only).
    rotated = cluster_certs.issue_from(ca, tmp_path / "rotated", "webhook", common_name=host, hosts=(host,))
    tls2 = {"tls.crt": _b64(rotated.cert.read_bytes()), "tls.key": _b64(rotated.key.read_bytes())}
    core.patch_namespaced_secret("webhook-tls", ns, {"data": tls2})
    apiserver.eventually(
        lambda: (root / "tls/tls.crt").read_bytes() == rotated.cert.read_bytes(), 20, "the rotated certificate file"
    )

    # Behind a Service: the endpoints controller fills the slice from the pod IP; the apiserver
    # reaches the pod through the Service, by its proxy and as a webhook with failurePolicy Fail.
    core.create_namespaced_service(
        ns,
        {
            "metadata": {"name": "vb-webhook"},
            "spec": {
                "selector": {"app": "vb-webhook"},
                "ports": [{"name": "https", "port": 443, "targetPort": "https"}],
            },
        },
    )
    discovery = k8s.DiscoveryV1Api(api)
    apiserver.eventually(
        lambda: any(
            ep.addresses == [pod.status.pod_ip] and ep.conditions.ready
            for s in discovery.list_namespaced_endpoint_slice(ns).items
            for ep in s.endpoints or []
        ),
        30,
        "an EndpointSlice with the pod IP",
    )
    answer = core.connect_get_namespaced_service_proxy_with_path("https:vb-webhook:443", ns, "healthz")
    assert "ok" in str(answer)
    runtimepods.register_webhook(api, ns, ca.cert.read_bytes())
    try:
        job = apiserver.eventually(lambda: runtimepods.create_vcjob(api, ns), 30, "the webhook to admit a Volcano Job")
        assert job["spec"]["queue"] == "default" and job["spec"]["maxRetry"] == 3
    finally:
        k8s.AdmissionregistrationV1Api(api).delete_mutating_webhook_configuration(f"vb-sim-{ns}")
        rbac.delete_cluster_role_binding(f"{ns}-serve")
        rbac.delete_cluster_role(f"{ns}-serve")

    # Deletion: SIGTERM, `vbridge serve` exits 0 at once, then the pod is gone.
    container = _container(sim, uid)
    started = time.monotonic()
    core.delete_namespaced_pod("webhook", ns)
    apiserver.eventually(lambda: _pod(api, ns, "webhook") is None, 30, "the pod gone")
    took = time.monotonic() - started
    assert container.status.state["terminated"]["exitCode"] == 0 and took < 10
    assert proc.returncode == 0
    print(f"graceful deletion took {took:.2f} s")


def netns_ips(sim: runtimesim.RuntimeSimThread) -> tuple[str, ...]:
    assert sim.runtime is not None
    return sim.runtime.config.nodes[runtimepods.NODE].pod_ips


def _log(sim: runtimesim.RuntimeSimThread, uid: str) -> str:
    return "".join(p.read_text() for p in sorted(_container(sim, uid).logs.glob("*.log")))


@pytest.mark.timeout(120)
def test_failing_container_restarts_with_backoff_and_a_stubborn_one_is_killed(
    sim: runtimesim.RuntimeSimThread, api: k8s.ApiClient, ns: str
) -> None:
    core = k8s.CoreV1Api(api)
    spec = {
        "nodeName": runtimepods.NODE,
        "restartPolicy": "OnFailure",
        "terminationGracePeriodSeconds": 2,
        "containers": [
            {"name": "crash", "image": runtimepods.IMAGE, "command": ["/bin/sh", "-c", "exit 3"]},
            {
                "name": "stubborn",
                "image": runtimepods.IMAGE,
                "command": ["/bin/sh", "-c", "trap '' TERM; while :; do sleep 1; done"],
            },
        ],
    }
    uid = core.create_namespaced_pod(ns, {"metadata": {"name": "flaky"}, "spec": spec}).metadata.uid

    def restarted_twice() -> k8s.V1ContainerStatus | None:
        pod = _pod(api, ns, "flaky")
        statuses = {s.name: s for s in (pod.status.container_statuses or [])} if pod else {}
        crash = statuses.get("crash")
        return crash if crash and crash.restart_count >= 2 else None

    crash = apiserver.eventually(restarted_twice, 30, "two restarts of the crashing container")
    last = crash.last_state.terminated or crash.state.terminated
    assert last is not None and last.exit_code == 3
    pod = _pod(api, ns, "flaky")
    assert pod is not None and pod.status.phase == "Running" and not _ready(pod)
    stubborn = _container(sim, uid, 1)
    started = time.monotonic()
    core.delete_namespaced_pod("flaky", ns)
    apiserver.eventually(lambda: _pod(api, ns, "flaky") is None, 30, "the pod gone")
    took = time.monotonic() - started
    assert stubborn.status.state["terminated"]["exitCode"] == 128 + signal.SIGKILL
    assert 2 <= took < 10


@pytest.mark.timeout(90)
def test_liveness_failure_restarts_the_container(api: k8s.ApiClient, sim: runtimesim.RuntimeSimThread, ns: str) -> None:
    core = k8s.CoreV1Api(api)
    container = {
        "name": "deaf",
        "image": runtimepods.IMAGE,
        "command": ["/bin/sh", "-c", "sleep 1000"],
        "livenessProbe": {"tcpSocket": {"port": 9999}, "periodSeconds": 1, "failureThreshold": 2},
    }
    spec = {"nodeName": runtimepods.NODE, "terminationGracePeriodSeconds": 1, "containers": [container]}
    core.create_namespaced_pod(ns, {"metadata": {"name": "deaf"}, "spec": spec})

    def restarted() -> k8s.V1ContainerStatus | None:
        pod = _pod(api, ns, "deaf")
        status = (pod.status.container_statuses or [None])[0] if pod else None
        return status if status and status.restart_count >= 1 and status.last_state.terminated else None

    status = apiserver.eventually(restarted, 30, "a restart after the liveness probe failed")
    assert status.last_state.terminated.exit_code == 128 + signal.SIGKILL
    core.delete_namespaced_pod("deaf", ns)
    apiserver.eventually(lambda: _pod(api, ns, "deaf") is None, 20, "the pod gone")
