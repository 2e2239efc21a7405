"""``controllers --manage-certs`` keeps the webhook's certificate: it makes the Secret, injects the
caBundle, and renews serving certificate and CA under load while ``serve --webhook-only`` reloads
them from files, with no admission failing.

The webhook is registered by URL (127.0.0.1: no pods on this test bed), so the certificate also
carries 127.0.0.1 (a hidden flag); the Secret is copied to files as a kubelet does (a symlink
swap). Validity is seconds: serving 9 s (renewed every ~6 s), CA 24 s (rotated after ~16 s).
"""

from __future__ import annotations

import base64
import datetime
import pathlib
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bridge import certs
from tests.builders import kubeflow as kf
from tests.support import apiserver, ctlproc, upstream
from vbridge.localcluster import binaries, cluster
from webhooks import configuration

pytestmark = pytest.mark.integration
KF = ("kubeflow.org", "v1")
LOAD_SECONDS = 22.0


@pytest.fixture(scope="module")
def lc(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.LocalCluster]:
    own = cluster.LocalCluster(tmp_path_factory.mktemp("cert-cluster"), bins=bins)
    own.start()
    upstream.install(own, "training-operator")
    try:
        yield own
    finally:
        own.stop()


def swap(folder: pathlib.Path, stamp: str, files: dict[str, bytes]) -> None:
    """As the kubelet updates a mounted Secret: a new folder, then one symlink swap."""
    (folder / stamp).mkdir()
    for name, data in files.items():
        (folder / stamp / name).write_bytes(data)
    (folder / "..tmp").symlink_to(stamp)
    (folder / "..tmp").replace(folder / "..data")
    for name in files:
        if not (folder / name).is_symlink():
            (folder / name).symlink_to(f"..data/{name}")


def secret_data(core: k8s.CoreV1Api, ns: str) -> dict[str, bytes] | None:
    try:
        data = core.read_namespaced_secret("vb-tls", ns).data or {}
    except k8s.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return {k: base64.b64decode(v) for k, v in data.items()}


def served(port: int) -> bytes:
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, ctx.wrap_socket(raw) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def webhook_config(name: str, ns: str, port: int) -> dict[str, Any]:
    dummy = certs.make_ca("not-ours", now=datetime.datetime.now(datetime.UTC), validity=certs.BACKDATE * 60)
    body = configuration.build(ca_bundle=dummy.cert, url=f"https://127.0.0.1:{port}", name=name)
    for hook in body["webhooks"]:
        hook["failurePolicy"] = "Fail"  # a TLS failure must fail the create, not pass unmutated
        hook["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": ns}}
    return body


@pytest.mark.timeout(180)
def test_managed_certificate_rotates_under_load_without_a_failed_admission(
    lc: cluster.LocalCluster, tmp_path: pathlib.Path
) -> None:
    api = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
    core, custom, admission = k8s.CoreV1Api(api), k8s.CustomObjectsApi(api), k8s.AdmissionregistrationV1Api(api)
    ns, hook_name, port = "rot-" + uuid.uuid4().hex[:6], "vb-rot-" + uuid.uuid4().hex[:6], cluster.free_port()
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    admission.create_mutating_webhook_configuration(webhook_config(hook_name, ns, port))
    ctl = ctlproc.Proc(
        "controllers",
        [
            "controllers",
            f"--kubeconfig={lc.kubeconfig}",
            "--manage-certs",
            "--cert-secret=vb-tls",
            f"--webhook-config={hook_name}",
            "--webhook-service=vb-webhook",
            f"--webhook-namespace={ns}",
            "--cert-extra-san=127.0.0.1",
            "--ca-validity=24",
            "--cert-validity=9",
            "--cert-check-period=1",
            "--health-port=0",
            "--no-vcjobs",
            "-v",
        ],
        tmp_path,
    )
    procs = [ctl]
    stop = threading.Event()
    threads: list[threading.Thread] = []
    try:
        first = apiserver.eventually(lambda: secret_data(core, ns), 30, "the Secret")
        assert {"tls.crt", "tls.key", "ca.crt"} <= set(first)
        leaf = certs.load_certs(first["tls.crt"])[0]
        assert set(certs.hosts_of(leaf)) == {f"vb-webhook.{ns}.svc", f"vb-webhook.{ns}.svc.cluster.local", "127.0.0.1"}
        assert any(certs.signed_by(leaf, ca) for ca in certs.load_certs(first["ca.crt"]))

        def injected() -> bool:
            hooks = admission.read_mutating_webhook_configuration(hook_name).webhooks
            return all(
                base64.b64decode(h.client_config.ca_bundle) == (secret_data(core, ns) or {})["ca.crt"] for h in hooks
            )

        apiserver.eventually(injected, 20, "the caBundle injected into every webhook")

        mounted = tmp_path / "tls"
        mounted.mkdir()
        swap(mounted, "..0", {"tls.crt": first["tls.crt"], "tls.key": first["tls.key"]})
        bundles: list[int] = []

        def kubelet() -> None:  # copies the Secret to the files, as the kubelet does
            last, n = first["tls.crt"], 0
            while not stop.is_set():
                data = secret_data(core, ns) or {}
                bundles.append(len(certs.load_certs(data.get("ca.crt", b""))))
                if data.get("tls.crt") and data["tls.crt"] != last:
                    n += 1
                    swap(mounted, f"..{n}", {"tls.crt": data["tls.crt"], "tls.key": data["tls.key"]})
                    last = data["tls.crt"]
                stop.wait(0.2)

        threads.append(threading.Thread(target=kubelet, daemon=True))
        threads[-1].start()
        web = ctlproc.Proc(
            "webhook",
            [
                "serve",
                f"--kubeconfig={lc.kubeconfig}",
                "--webhook-only",
                "--host=127.0.0.1",
                f"--port={port}",
                f"--tls-cert={mounted / 'tls.crt'}",
                f"--tls-key={mounted / 'tls.key'}",
                "--tls-reload-seconds=0.5",
                "-v",
            ],
            tmp_path,
        )
        procs.append(web)
        apiserver.eventually(lambda: ctlproc.probe_tls(port, "/readyz") == 200, 30, "the webhook ready")

        created, failures = 0, []
        seen: dict[bytes, float] = {}
        started = time.monotonic()
        while time.monotonic() - started < LOAD_SECONDS:
            job = kf.tfjob(f"j{created}", Worker=kf.replica(2))
            job["metadata"]["namespace"] = ns
            try:
                out = custom.create_namespaced_custom_object(*KF, ns, "tfjobs", job)
                template = out["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
                if template.get("schedulerName") != "volcano":
                    failures.append(f"j{created}: not mutated")
            except k8s.ApiException as exc:
                failures.append(f"j{created}: {exc.status} {exc.body}")
            created += 1
            seen.setdefault(served(port), time.monotonic() - started)
        assert created > 50
        assert failures == [], failures[:5]
        final = secret_data(core, ns) or {}
        assert len(seen) >= 3, f"only {len(seen)} certificates served during the load"
        assert max(bundles) == 2  # the CA rotated: old and new trusted together
        assert final["ca.key"] != first["ca.key"]
        apiserver.eventually(
            lambda: served(port) == ssl.PEM_cert_to_DER_cert(final["tls.crt"].decode()),
            5,
            "the newest certificate served",
        )
        print(
            f"rotation: {created} TFJobs admitted, 0 failed; {len(seen)} serving certificates seen at "
            f"{', '.join(f'{t:.1f}' for t in seen.values())} s; CA bundle sizes {sorted(set(bundles))}"
        )
        assert web.terminate() == 0, web.tail()
    except BaseException:
        for proc in procs:
            print(f"--- {proc.name}\n{proc.tail(60)}")
        raise
    finally:
        stop.set()
        for t in threads:
            t.join(5)
        for proc in procs:
            proc.stop()
        admission.delete_mutating_webhook_configuration(hook_name)
        core.delete_namespace(ns)
        api.close()
