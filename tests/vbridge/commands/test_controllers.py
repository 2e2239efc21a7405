"""``vbridge controllers`` flags, their $POD_NAMESPACE defaults and what they build."""

from __future__ import annotations

import datetime

import pytest

from bridge import defaults, errors
from bridge.k8s import client, kubeconfigs
from vbridge import cli
from vbridge.commands import controllers

CERTS = ["--manage-certs", "--cert-secret=vb-tls", "--webhook-config=vb", "--webhook-service=vb-webhook"]


def _api() -> client.Client:
    conn = kubeconfigs.Connection(server="https://127.0.0.1:1", ca_file=None, cert_file=None, key_file=None)
    return client.Client(conn)


def _args(*flags: str) -> object:
    return cli.parser("controllers").parse_args(["controllers", "--scheduler-name=vb", "--templates=/t", *flags])


def test_defaults_without_pod_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    args = _args()
    assert controllers.namespaces(args) == (defaults.SYSTEM_NAMESPACE, defaults.SYSTEM_NAMESPACE)
    assert args.lease_name == "volcano-bridge-controllers" and not args.leader_elect
    assert (args.health_host, args.health_port) == ("127.0.0.1", 8081)
    built = controllers.build(_api(), args)
    assert built.elector is None and built.certs is None and built.health == ("127.0.0.1", 8081)


def test_pod_namespace_is_the_default_and_flags_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POD_NAMESPACE", "vb-system")
    assert controllers.namespaces(_args()) == ("vb-system", "vb-system")
    assert controllers.namespaces(_args("--lease-namespace=a", "--webhook-namespace=b")) == ("a", "b")
    built = controllers.build(_api(), _args("--leader-elect", "--lease-name=l", *CERTS))
    assert built.elector is not None and (built.elector.namespace, built.elector.name) == ("vb-system", "l")
    assert built.elector.lease_seconds == defaults.LEASE_SECONDS
    assert built.certs is not None and built.certs.namespace == "vb-system"
    assert built.certs.hosts == ("vb-webhook.vb-system.svc", "vb-webhook.vb-system.svc.cluster.local")
    assert built.certs.serving_validity == defaults.SERVING_VALIDITY
    assert built.certs.serving_renew_before == defaults.SERVING_RENEW_BEFORE


def test_hidden_timing_flags_for_tests() -> None:
    args = _args("--leader-elect", "--lease-duration=3", "--renew-deadline=2", "--retry-period=0.5", *CERTS)
    args2 = _args(*CERTS, "--cert-validity=9", "--ca-validity=30", "--cert-extra-san=127.0.0.1")
    built = controllers.build(_api(), args)
    assert built.elector is not None
    assert (built.elector.lease_seconds, built.elector.renew_seconds, built.elector.retry_seconds) == (3, 2, 0.5)
    mgr = controllers.build(_api(), args2).certs
    assert mgr is not None and mgr.serving_renew_before == datetime.timedelta(seconds=3)
    assert mgr.ca_validity == datetime.timedelta(seconds=30) and mgr.hosts[-1] == "127.0.0.1"


def test_manage_certs_needs_its_names() -> None:
    with pytest.raises(errors.ConfigError, match="--cert-secret, --webhook-service"):
        controllers.build(_api(), _args("--manage-certs", "--webhook-config=vb"))


def test_no_vcjobs_leaves_out_the_volcano_job_controller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VBRIDGE_TEMPLATES", "/nonexistent")
    with_jobs = {type(w).__name__ for w in controllers.build(_api(), _args()).workers()}
    without = {type(w).__name__ for w in controllers.build(_api(), _args("--no-vcjobs")).workers()}
    assert "VcJobController" in with_jobs and "VcJobController" not in without
    assert "JobReconciler" in without
    managed = {type(w).__name__ for w in controllers.build(_api(), _args(*CERTS)).workers()}
    assert "Manager" in managed
