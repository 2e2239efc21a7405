"""The chart's documented value combinations, and ``helm lint`` / ``helm template`` over them.

Each combination is a list of helm flags (``--set``, ``--set-file``, ``--api-versions``). The CA
of the ``secret`` combination is a throwaway self-signed certificate made by ``make_ca``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import pathlib
import subprocess
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from vbridge import chartgen

__all__ = ["COMBOS", "NAMESPACE", "RELEASE", "Rendered", "kinds", "lint", "make_ca", "render"]

CHART = chartgen.CHART
RELEASE = "vb"
NAMESPACE = "volcano-bridge"
KUBE_VERSION = "1.37.2"
CA_FILE = "@CA@"  # replaced by the path of make_ca's file

_TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}
_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["infra"]}]}]
        }
    }
}
# name -> helm flags. The documented combinations (charts/README.md, "Checked combinations").
COMBOS: dict[str, list[str]] = {
    "defaults": [],
    "cert-manager": ["--set", "certificates.mode=cert-manager", "--api-versions", "cert-manager.io/v1"],
    "secret": [
        *("--set", "certificates.mode=secret"),
        *("--set", "certificates.secretName=my-tls"),
        *("--set-file", f"certificates.caBundle={CA_FILE}"),
    ],
    "external": ["--set", "volcano.external=true"],
    "native": ["--set", "backend=native"],
    "placement": [
        *("--set", "webhook.replicas=3"),
        *("--set", "webhook.nodeSelector.pool=infra"),
        *("--set-json", "webhook.tolerations=" + json.dumps([_TOLERATION])),
        *("--set", "webhook.priorityClassName=system-cluster-critical"),
        *("--set", "controllers.priorityClassName=system-cluster-critical"),
        *("--set-json", "scheduler.affinity=" + json.dumps(_AFFINITY)),
    ],
}
# helm lint has no --api-versions: the cert-manager combination lints with the check turned off.
_LINT_ONLY = {"cert-manager": ["--set", "certificates.certManager.checkInstalled=false"]}


def make_ca(folder: pathlib.Path) -> pathlib.Path:
    """A self-signed CA certificate (PEM) in ``folder``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "volcano-bridge test CA")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    path = folder / "ca.crt"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def _flags(flags: list[str], ca: pathlib.Path) -> list[str]:
    return [f.replace(CA_FILE, str(ca)) for f in flags]


def lint(helm: pathlib.Path, combo: str, ca: pathlib.Path) -> subprocess.CompletedProcess[str]:
    flags = [f for f in COMBOS[combo] if f not in ("--api-versions", "cert-manager.io/v1")]
    return subprocess.run(
        [
            *(str(helm), "lint", "--strict", "--kube-version", KUBE_VERSION, str(CHART)),
            *_flags(flags, ca),
            *_LINT_ONLY.get(combo, []),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


@dataclasses.dataclass(frozen=True)
class Rendered:
    text: str
    docs: list[dict[str, Any]]

    def one(self, kind: str, name: str) -> dict[str, Any]:
        found = [d for d in self.docs if d["kind"] == kind and d["metadata"]["name"] == name]
        assert len(found) == 1, f"{kind} {name}: {len(found)} rendered"
        return found[0]

    def all(self, kind: str) -> list[dict[str, Any]]:
        return [d for d in self.docs if d["kind"] == kind]


def run_template(helm: pathlib.Path, flags: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(helm), "template", RELEASE, str(CHART), "--namespace", NAMESPACE, "--kube-version", KUBE_VERSION, *flags],
        capture_output=True,
        text=True,
        check=False,
    )


def render(helm: pathlib.Path, combo: str, ca: pathlib.Path, *extra: str) -> Rendered:
    proc = run_template(helm, [*_flags(COMBOS[combo], ca), *extra])
    assert proc.returncode == 0, proc.stderr
    return Rendered(proc.stdout, [d for d in yaml.safe_load_all(proc.stdout) if d])


def kinds(rendered: Rendered) -> list[str]:
    return sorted(d["kind"] for d in rendered.docs)
