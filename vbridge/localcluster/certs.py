"""A throwaway PKI for a local control plane: one CA, serving and client certificates, SA keys.

Only for local and test clusters; production webhooks mount certificates from cert-manager.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import pathlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

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


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _name(common: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _write(folder: pathlib.Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> KeyPair:
    pair = KeyPair(cert=folder / f"{stem}.crt", key=folder / f"{stem}.key")
    pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pair.key.write_bytes(_key_pem(key))
    pair.key.chmod(0o600)
    return pair


def _make_ca(folder: pathlib.Path) -> tuple[KeyPair, x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("volcano-bridge-local-ca"))
        .issuer_name(_name("volcano-bridge-local-ca"))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALID)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _write(folder, "ca", cert, key), cert, key


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
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organization))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALID)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
    )
    if hosts:
        sans: list[x509.GeneralName] = []
        for host in hosts:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                sans.append(x509.DNSName(host))
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        usage = [ExtendedKeyUsageOID.SERVER_AUTH]
    else:
        usage = [ExtendedKeyUsageOID.CLIENT_AUTH]
    builder = builder.add_extension(x509.ExtendedKeyUsage(usage), critical=False)
    return _write(folder, stem, builder.sign(ca_key, hashes.SHA256()), key)


def make_pki(folder: pathlib.Path) -> Pki:
    folder.mkdir(parents=True, exist_ok=True)
    ca, ca_cert, ca_key = _make_ca(folder)
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
    sa_private.write_bytes(_key_pem(sa_key))
    sa_private.chmod(0o600)
    sa_public.write_bytes(
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return Pki(ca=ca, serving=serving, admin=admin, sa_public=sa_public, sa_private=sa_private)


def issue_from(ca: KeyPair, folder: pathlib.Path, stem: str, *, common_name: str, hosts: tuple[str, ...]) -> KeyPair:
    """A serving certificate signed by the CA stored in ``ca`` (e.g. a local cluster's)."""
    ca_cert = x509.load_pem_x509_certificate(ca.cert.read_bytes())
    ca_key = serialization.load_pem_private_key(ca.key.read_bytes(), password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise TypeError("the local CA key is expected to be an EC key")
    folder.mkdir(parents=True, exist_ok=True)
    return issue(folder, stem, ca_cert=ca_cert, ca_key=ca_key, common_name=common_name, hosts=hosts)
