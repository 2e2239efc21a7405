"""``vbridge serve`` flags: --webhook-only builds the server and facts but no reconcilers."""

from __future__ import annotations

import pathlib

from bridge.k8s import client, kubeconfigs
from vbridge import cli, runtime
from vbridge.commands import serve
from webhooks import server

CHART = [
    "serve",
    "--webhook-only",
    "--host=0.0.0.0",
    "--port=9443",
    "--tls-cert=/tls/tls.crt",
    "--tls-key=/tls/tls.key",
    "--scheduler-name=vb",
    "--templates=/templates",
]


def _api() -> client.Client:
    conn = kubeconfigs.Connection(server="https://127.0.0.1:1", ca_file=None, cert_file=None, key_file=None)
    return client.Client(conn)


def test_the_charts_flags_parse() -> None:
    args = cli.parser("serve").parse_args(CHART)
    assert args.webhook_only and args.host == "0.0.0.0" and args.port == 9443
    assert (args.tls_cert, args.tls_key, args.scheduler_name) == ("/tls/tls.crt", "/tls/tls.key", "vb")
    assert args.templates == "/templates" and args.func is serve.main
    assert not cli.parser("serve").parse_args(CHART[:1] + CHART[2:]).webhook_only


def test_webhook_only_builds_no_reconcilers() -> None:
    settings = server.Settings(scheduler_name="vb")
    alone = serve.bridge(_api(), settings, runtime.TEMPLATES, reconcile=False)
    assert alone.reconcilers() == []
    both = serve.bridge(_api(), settings, pathlib.Path(runtime.TEMPLATES), reconcile=True)
    kinds = {type(r).__name__ for r in both.reconcilers()}
    assert {"JobReconciler", "SparkReconciler", "VcJobController"} <= kinds
