"""A throwaway PKI for a local control plane: one CA, serving and client certificates, SA keys.

Only for local and test clusters; the certificates themselves are made by ``bridge.certs``.
"""

from __future__ import annotations

import dataclasses
import datetime
import pathlib

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from bridge import certs

__all__ = ["KeyPair", "Pki", "issue", "issue_from", "make_pki"]

_VALID = datetime.timedelta(days=365)


@dataclasses.dataclass(frozen=True)
class KeyPair:
    cert: pathlib.Path
    key: pathlib.Path


@dataclasses.dataclass(frozen=True)
class Pki:
    ca: KeyPair
    serving: KeyPair  # kube-apiserver's, valid for 127.0.0.1 and localhost
    admin: KeyPair  # a client in system:masters
    sa_public: pathlib.Path
    sa_private: pathlib.Path


def _write(folder: pathlib.Path, stem: str, pair: certs.Pair) -> KeyPair:
    out = KeyPair(cert=folder / f"{stem}.crt", key=folder / f"{stem}.key")
    out.cert.write_bytes(pair.cert)
    out.key.write_bytes(pair.key)
    out.key.chmod(0o600)
    return out


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def issue(
    folder: pathlib.Path,
    stem: str,
    *,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    common_name: str,
    organization: str | None = None,
    hosts: tuple[str, ...] = (),
) -> KeyPair:
    """Issue a leaf certificate: a server one when ``hosts`` is given, else a client one."""
    ca = certs.Pair(cert=ca_cert.public_bytes(serialization.Encoding.PEM), key=certs.key_pem(ca_key))
    pair = certs.issue(ca, common_name=common_name, organization=organization, hosts=hosts, now=_now(), validity=_VALID)
    return _write(folder, stem, pair)


def make_pki(folder: pathlib.Path) -> Pki:
    folder.mkdir(parents=True, exist_ok=True)
    ca_pair = certs.make_ca("volcano-bridge-local-ca", now=_now(), validity=_VALID)
    ca = _write(folder, "ca", ca_pair)
    ca_cert, ca_key = ca_pair.certificate, ca_pair.private_key()
    serving = issue(
        folder,
        "apiserver",
        ca_cert=ca_cert,
        ca_key=ca_key,
        common_name="kube-apiserver",
        hosts=("127.0.0.1", "localhost", "::1", "kubernetes.default.svc", "10.0.0.1"),
    )
    admin = issue(
        folder, "admin", ca_cert=ca_cert, ca_key=ca_key, common_name="vbridge-admin", organization="system:masters"
    )
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    sa_private, sa_public = folder / "sa.key", folder / "sa.pub"
    sa_private.write_bytes(
        sa_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    sa_private.chmod(0o600)
    sa_public.write_bytes(
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return Pki(ca=ca, serving=serving, admin=admin, sa_public=sa_public, sa_private=sa_private)


def issue_from(ca: KeyPair, folder: pathlib.Path, stem: str, *, common_name: str, hosts: tuple[str, ...]) -> KeyPair:
    """A serving certificate signed by the CA stored in ``ca`` (e.g. a local cluster's)."""
    pair = certs.Pair(cert=ca.cert.read_bytes(), key=ca.key.read_bytes())
    folder.mkdir(parents=True, exist_ok=True)
    issued = certs.issue(pair, common_name=common_name, hosts=hosts, now=_now(), validity=_VALID)
    return _write(folder, stem, issued)
