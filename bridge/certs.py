"""X.509 for the webhook: a CA, certificates it signs, and the decisions of their rotation.

No I/O: PEM bytes in, PEM bytes out (keys are random, the clock is an argument). Used by the
local test bed (``vbridge.localcluster.certs`` writes them to files) and by the controllers'
self-managed webhook certificate (``vbridge.controllers.certs`` keeps them in a Secret):

- :func:`make_ca` and :func:`issue` make the pairs (EC P-256, SHA-256);
- :func:`due` says when a certificate is to be renewed;
- :func:`merge_bundle` is the trust bundle during a CA rotation: the new CA is added while the
  old ones stay until they expire, so a server still presenting a certificate of the old CA is
  trusted until the new one is in place.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress

from cryptography import exceptions, x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from bridge import errors

__all__ = [
    "BACKDATE",
    "PEM",
    "Pair",
    "due",
    "hosts_of",
    "issue",
    "key_pem",
    "load_certs",
    "make_ca",
    "matches",
    "merge_bundle",
    "service_hosts",
    "signed_by",
]

PEM = serialization.Encoding.PEM
BACKDATE = datetime.timedelta(minutes=1)  # notBefore in the past: clocks of other hosts may lag


@dataclasses.dataclass(frozen=True)
class Pair:
    cert: bytes  # PEM
    key: bytes  # PEM, PKCS#8, unencrypted

    @property
    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert)

    def private_key(self) -> ec.EllipticCurvePrivateKey:
        key = serialization.load_pem_private_key(self.key, password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise errors.ConfigError("expected an EC private key")
        return key


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _name(common: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def make_ca(common_name: str, *, now: datetime.datetime, validity: datetime.timedelta) -> Pair:
    """A self-signed CA valid from ``now`` (less ``BACKDATE``) for ``validity``."""
    key = ec.generate_private_key(ec.SECP256R1())
    usage = x509.KeyUsage(
        digital_signature=True,
        key_cert_sign=True,
        crl_sign=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        encipher_only=False,
        decipher_only=False,
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Pair(cert=cert.public_bytes(serialization.Encoding.PEM), key=key_pem(key))


def issue(
    ca: Pair,
    *,
    common_name: str,
    now: datetime.datetime,
    validity: datetime.timedelta,
    hosts: tuple[str, ...] = (),
    organization: str | None = None,
) -> Pair:
    """A leaf signed by ``ca``: a server certificate for ``hosts`` (IP or DNS SANs) when given,
    else a client one. It never outlives its CA."""
    ca_cert, ca_key = ca.certificate, ca.private_key()
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organization))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(min(now + validity, ca_cert.not_valid_after_utc))
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
    cert = builder.sign(ca_key, hashes.SHA256())
    return Pair(cert=cert.public_bytes(serialization.Encoding.PEM), key=key_pem(key))


def service_hosts(service: str, namespace: str, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The names a Service-registered webhook is called by: ``SVC.NS.svc`` (what the apiserver
    verifies) and ``SVC.NS.svc.cluster.local``, then ``extra`` (e.g. ``127.0.0.1`` in tests)."""
    names = (f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local", *extra)
    return tuple(dict.fromkeys(names))


def hosts_of(cert: x509.Certificate) -> tuple[str, ...]:
    """The certificate's SANs (DNS names, then IPs), as :func:`issue` takes them."""
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return ()
    ips = [str(ip) for ip in ext.get_values_for_type(x509.IPAddress)]
    return (*ext.get_values_for_type(x509.DNSName), *ips)


def due(now: datetime.datetime, not_after: datetime.datetime, renew_before: datetime.timedelta) -> bool:
    """Whether a certificate that expires at ``not_after`` is to be renewed at ``now``."""
    return not_after - now <= renew_before


def load_certs(bundle: bytes) -> list[x509.Certificate]:
    """Every certificate of a PEM bundle, in order; an unreadable bundle has none."""
    try:
        return x509.load_pem_x509_certificates(bundle) if bundle.strip() else []
    except ValueError:
        return []


def signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, exceptions.InvalidSignature):
        return False
    return True


def matches(pair: Pair) -> bool:
    """Whether the key is the certificate's (a half-written pair is not)."""
    try:
        public = pair.private_key().public_key()
        return public.public_numbers() == pair.certificate.public_key().public_numbers()  # type: ignore[union-attr]
    except (ValueError, errors.ConfigError, AttributeError):
        return False


def merge_bundle(bundle: bytes, ca: bytes, *, now: datetime.datetime) -> bytes:
    """The CA bundle with ``ca`` added (last) and expired certificates dropped, each once.

    During a CA rotation the bundle holds the old CA and the new one, so clients trust the
    serving certificate before and after it is replaced; the old CA leaves once expired, when
    nothing it signed can be valid either.
    """
    kept: dict[bytes, x509.Certificate] = {}
    for cert in [*load_certs(bundle), *load_certs(ca)]:
        if cert.not_valid_after_utc > now:
            kept.pop(cert.fingerprint(hashes.SHA256()), None)
            kept[cert.fingerprint(hashes.SHA256())] = cert
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in kept.values())
