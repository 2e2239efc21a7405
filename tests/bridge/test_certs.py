"""The webhook's certificates, pure: CA and serving pair, the renew decision, the bundle in rotation."""

from __future__ import annotations

import datetime

from cryptography import x509

from bridge import certs

NOW = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)


def test_ca_and_serving_pair_with_service_names_and_validity() -> None:
    ca = certs.make_ca("test-ca", now=NOW, validity=365 * DAY)
    ca_cert = ca.certificate
    assert ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca_cert.not_valid_after_utc == NOW + 365 * DAY
    assert ca_cert.not_valid_before_utc == NOW - certs.BACKDATE
    hosts = certs.service_hosts("vb-webhook", "vb-system", ("127.0.0.1",))
    assert hosts == ("vb-webhook.vb-system.svc", "vb-webhook.vb-system.svc.cluster.local", "127.0.0.1")
    serving = certs.issue(ca, common_name=hosts[0], hosts=hosts, now=NOW, validity=90 * DAY)
    cert = serving.certificate
    assert certs.hosts_of(cert) == hosts
    assert (
        cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        .value.get_values_for_type(x509.IPAddress)[0]
        .compressed
        == "127.0.0.1"
    )
    assert cert.not_valid_after_utc == NOW + 90 * DAY
    assert certs.signed_by(cert, ca_cert) and certs.matches(serving)
    other = certs.make_ca("other", now=NOW, validity=DAY)
    assert not certs.signed_by(cert, other.certificate)
    assert not certs.matches(certs.Pair(cert=serving.cert, key=other.key))  # key and cert apart


def test_a_leaf_never_outlives_its_ca() -> None:
    ca = certs.make_ca("short", now=NOW, validity=10 * DAY)
    leaf = certs.issue(ca, common_name="x", hosts=("x",), now=NOW, validity=90 * DAY)
    assert leaf.certificate.not_valid_after_utc == NOW + 10 * DAY


def test_renew_once_less_than_renew_before_remains() -> None:
    not_after = NOW + 90 * DAY
    assert not certs.due(NOW, not_after, 30 * DAY)
    assert not certs.due(NOW + 59 * DAY, not_after, 30 * DAY)
    assert certs.due(NOW + 60 * DAY, not_after, 30 * DAY)
    assert certs.due(NOW + 91 * DAY, not_after, 30 * DAY)  # expired: certainly


def test_bundle_keeps_the_old_ca_beside_the_new_until_it_expires() -> None:
    old = certs.make_ca("old", now=NOW, validity=30 * DAY)
    new = certs.make_ca("new", now=NOW + 20 * DAY, validity=365 * DAY)
    rotating = certs.merge_bundle(old.cert, new.cert, now=NOW + 20 * DAY)
    names = [c.subject.rfc4514_string() for c in certs.load_certs(rotating)]
    assert names == ["CN=old", "CN=new"]
    assert certs.merge_bundle(rotating, new.cert, now=NOW + 21 * DAY) == rotating  # each CA once
    later = certs.merge_bundle(rotating, new.cert, now=NOW + 31 * DAY)  # the old one expired
    assert [c.subject.rfc4514_string() for c in certs.load_certs(later)] == ["CN=new"]
    assert certs.merge_bundle(b"garbage", new.cert, now=NOW + 21 * DAY) == new.cert
