"""The webhook's self-managed certificate (``vbridge controllers --manage-certs``), as Kueue's
internal cert management does it: the leader keeps a CA and a serving certificate in a Secret
and the CA in every webhook's ``caBundle``.

The Secret (``kubernetes.io/tls``) holds ``tls.crt``/``tls.key`` (the serving pair, for
``SVC.NS.svc`` and ``SVC.NS.svc.cluster.local``), ``ca.crt`` (the trust bundle: the current CA
and older ones not yet expired) and ``ca.key`` (the current CA's key; the current CA is the
bundle's certificate that matches it). Each round (:meth:`Manager.reconcile`):

1. a missing CA, or one with less than ``ca_renew_before`` left, is replaced by a new CA, which
   is *added* to the bundle (``bridge.certs.merge_bundle``): old and new are trusted together;
2. every webhook of the MutatingWebhookConfiguration gets the bundle as ``caBundle``;
3. the serving pair is issued again when it is unusable (missing, key apart, expired: at once)
   or due (less than ``serving_renew_before`` left, wrong SANs, or signed by a CA other than the
   current one: only once the webhooks already trusted the current CA before this round, so
   the apiserver never meets a certificate it does not trust yet);
4. the Secret is written (created, or patched by diff with a ``resourceVersion`` test), owned
   by ``owner`` when given (the controllers' ServiceAccount, :mod:`bridge.k8s.owners`), so the
   garbage collector removes it with the release.

The old CA stays in the bundle until it expires, so the webhook servers may take their time
(a kubelet refreshes mounted Secrets within a minute or so) to present the new certificate.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import datetime
import logging
from collections.abc import Callable
from typing import Any

from bridge import certs, defaults, errors, patching
from bridge.k8s import client, owners, paths

__all__ = ["CA_NAME", "WEBHOOKS", "Manager", "Round"]

log = logging.getLogger(__name__)
WEBHOOKS = "admissionregistration.k8s.io/v1"
CA_NAME = "volcano-bridge-webhook-ca"


@dataclasses.dataclass(frozen=True)
class Round:
    """What one reconcile did."""

    new_ca: bool = False
    issued: bool = False  # a new serving pair
    bundle_written: bool = False  # the webhooks' caBundle changed
    waiting: bool = False  # a serving pair is due but waits for the bundle to be trusted


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _with_version_test(obj: dict[str, Any], ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rv = obj["metadata"]["resourceVersion"]
    return [{"op": "test", "path": "/metadata/resourceVersion", "value": rv}, *ops]


@dataclasses.dataclass
class Manager:
    api: client.Client
    secret: str
    namespace: str
    webhook_config: str
    service: str
    extra_hosts: tuple[str, ...] = ()  # more SANs (e.g. 127.0.0.1 when registered by URL in tests)
    ca_validity: datetime.timedelta = defaults.CA_VALIDITY
    ca_renew_before: datetime.timedelta = defaults.CA_RENEW_BEFORE
    serving_validity: datetime.timedelta = defaults.SERVING_VALIDITY
    serving_renew_before: datetime.timedelta = defaults.SERVING_RENEW_BEFORE
    period: float = defaults.CERT_CHECK_SECONDS
    clock: Callable[[], datetime.datetime] = _utcnow
    owner: dict[str, Any] | None = None  # an ownerReference for the Secret
    rounds: list[Round] = dataclasses.field(default_factory=list)

    @property
    def hosts(self) -> tuple[str, ...]:
        return certs.service_hosts(self.service, self.namespace, self.extra_hosts)

    async def run(self) -> None:
        """Reconcile every ``period`` seconds (sooner while a step waits) until cancelled."""
        while True:
            wait = self.period
            try:
                done = await self.reconcile()
                self.rounds.append(done)
                if done.waiting or done.new_ca:
                    wait = min(self.period, defaults.RETRY_SECONDS)
            except (errors.ApiError, OSError) as exc:
                log.warning("webhook certificate round failed: %s", exc)
                wait = min(self.period, defaults.RETRY_SECONDS)
            await asyncio.sleep(wait)

    async def reconcile(self) -> Round:
        now = self.clock()
        secret_path = paths.resource("v1", "secrets", namespace=self.namespace, name=self.secret)
        secret = await self._get(secret_path)
        data = {k: base64.b64decode(v) for k, v in ((secret or {}).get("data") or {}).items()}
        bundle = certs.merge_bundle(data.get("ca.crt", b""), b"", now=now)
        ca = _current_ca(bundle, data.get("ca.key", b""))
        new_ca = ca is None or certs.due(now, ca.certificate.not_valid_after_utc, self.ca_renew_before)
        if ca is None or new_ca:
            ca = certs.make_ca(CA_NAME, now=now, validity=self.ca_validity)
            bundle = certs.merge_bundle(bundle, ca.cert, now=now)
            log.info("made a new webhook CA (valid until %s)", ca.certificate.not_valid_after_utc)
        trusted_before, bundle_written = await self._inject(bundle, ca)
        serving = certs.Pair(cert=data.get("tls.crt", b""), key=data.get("tls.key", b""))
        usable = _usable(serving, now)
        due = (
            not usable
            or certs.due(now, serving.certificate.not_valid_after_utc, self.serving_renew_before)
            or set(certs.hosts_of(serving.certificate)) != set(self.hosts)
            or not certs.signed_by(serving.certificate, ca.certificate)
        )
        issue = due and (not usable or trusted_before)
        if issue:
            serving = certs.issue(
                ca, common_name=self.hosts[0], hosts=self.hosts, now=now, validity=self.serving_validity
            )
            log.info(
                "issued a new webhook serving certificate (valid until %s)", serving.certificate.not_valid_after_utc
            )
        desired = {"tls.crt": serving.cert, "tls.key": serving.key, "ca.crt": bundle, "ca.key": ca.key}
        await self._write_secret(secret_path, secret, desired)
        return Round(new_ca=new_ca, issued=issue, bundle_written=bundle_written, waiting=due and not issue)

    async def _get(self, path: str) -> dict[str, Any] | None:
        try:
            return await self.api.request("GET", path)
        except errors.ApiError as exc:
            if exc.status == 404:
                return None
            raise

    async def _inject(self, bundle: bytes, ca: certs.Pair) -> tuple[bool, bool]:
        """Set every webhook's caBundle; (whether the current CA was trusted before, written)."""
        path = paths.resource(WEBHOOKS, "mutatingwebhookconfigurations", name=self.webhook_config)
        config = await self._get(path)
        if config is None:
            log.warning("MutatingWebhookConfiguration %s not found: no caBundle to keep", self.webhook_config)
            return True, False  # nobody calls the webhook through it: nothing to break
        hooks = config.get("webhooks") or []
        trusted = bool(hooks) and all(_trusts(h, ca) for h in hooks)
        desired = {
            **config,
            "webhooks": [patching.assoc(h, ("clientConfig", "caBundle"), _b64(bundle)) for h in hooks],
        }
        ops = patching.diff(config, desired)
        if ops:
            await self.api.request("PATCH", path, body=_with_version_test(config, ops), content_type=client.JSON_PATCH)
            log.info("caBundle of %s: %d CA(s)", self.webhook_config, len(certs.load_certs(bundle)))
        return trusted, bool(ops)

    async def _write_secret(self, path: str, secret: dict[str, Any] | None, desired: dict[str, bytes]) -> None:
        data = {k: _b64(v) for k, v in desired.items()}
        if secret is None:
            body = {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": owners.adopt({"name": self.secret, "namespace": self.namespace}, self.owner),
                "type": "kubernetes.io/tls",
                "data": data,
            }
            await self.api.request("POST", paths.resource("v1", "secrets", namespace=self.namespace), body=body)
            return
        metadata = owners.adopt(secret["metadata"], self.owner)
        ops = patching.diff(secret, {**secret, "metadata": metadata, "data": {**(secret.get("data") or {}), **data}})
        if ops:
            await self.api.request("PATCH", path, body=_with_version_test(secret, ops), content_type=client.JSON_PATCH)


def _current_ca(bundle: bytes, key: bytes) -> certs.Pair | None:
    for cert in certs.load_certs(bundle):
        pair = certs.Pair(cert=cert.public_bytes(certs.PEM), key=key)
        if key and certs.matches(pair):
            return pair
    return None


def _usable(pair: certs.Pair, now: datetime.datetime) -> bool:
    if not pair.cert or not pair.key or not certs.load_certs(pair.cert) or not certs.matches(pair):
        return False
    return pair.certificate.not_valid_after_utc > now


def _trusts(hook: dict[str, Any], ca: certs.Pair) -> bool:
    bundle = base64.b64decode((hook.get("clientConfig") or {}).get("caBundle") or "")
    return ca.certificate in certs.load_certs(bundle)
