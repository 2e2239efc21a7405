"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``leaderelection``.

Acquire: create the Lease, or take it over once its holder has not renewed for
``lease_seconds`` *as observed by our clock* (we time from when we last saw the record
change, so clock skew between hosts does not matter). Renew every ``retry_seconds``. Every
update is a PUT carrying the ``resourceVersion`` we read, so two candidates cannot both win
one round: the loser gets a 409.

``is_leader()`` turns False ``renew_seconds`` after the last successful renew even if the
loop is stuck, which is before any other candidate may take over (``lease_seconds``). As
client-go warns, this does not fence: a stalled leader may still have requests in flight, so
the writes themselves stay safe (binds by UID with 409 handling, status patches guarded by
``resourceVersion``).

On cancellation the holder releases the Lease as client-go's ``ReleaseOnCancel`` does
(:func:`released`: no holder, a one-second duration), so a standby takes over at its next
retry instead of waiting out ``lease_seconds``. Both the scheduler and the controllers use it.

``owner`` (a ServiceAccount's ownerReference, :mod:`bridge.k8s.owners`) is set on the Lease when
it is created or next renewed, so the garbage collector removes it with that account.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import time
from collections.abc import Callable
from typing import Any

from bridge import defaults, errors
from bridge.k8s import client, owners, paths

__all__ = ["API", "Elector", "released"]

log = logging.getLogger(__name__)

API = "coordination.k8s.io/v1"


def _micro_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Elector:
    def __init__(
        self,
        api: client.Client,
        *,
        name: str,
        identity: str,
        namespace: str = defaults.SYSTEM_NAMESPACE,
        lease_seconds: float = defaults.LEASE_SECONDS,
        renew_seconds: float = defaults.RENEW_SECONDS,
        retry_seconds: float = defaults.RETRY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        owner: dict[str, Any] | None = None,
    ) -> None:
        if not retry_seconds < renew_seconds < lease_seconds:
            raise errors.ConfigError("leader election needs retry < renew deadline < lease duration")
        self.api = api
        self.name = name
        self.identity = identity
        self.namespace = namespace
        self.lease_seconds = lease_seconds
        self.renew_seconds = renew_seconds
        self.retry_seconds = retry_seconds
        self.clock = clock
        self.owner = owner
        self.changed = asyncio.Event()  # set on every gain or loss of leadership
        self._valid_until = 0.0
        self._observed: tuple[str, float] = ("", 0.0)  # (resourceVersion, when we first saw it)
        self._rv = ""

    def is_leader(self) -> bool:
        return self.clock() < self._valid_until

    async def run(self) -> None:
        """Try to acquire, then keep renewing, until cancelled; then release the Lease."""
        try:
            while True:
                was = self.is_leader()
                try:
                    await self.try_once()
                except (errors.ApiError, OSError) as exc:
                    log.warning("leader election round failed: %s", exc)
                if was != self.is_leader():
                    log.info("%s leadership of %s", "acquired" if self.is_leader() else "lost", self.name)
                    self.changed.set()
                await asyncio.sleep(self.retry_seconds)
        finally:
            if self.is_leader():
                with contextlib.suppress(errors.ApiError, OSError, asyncio.CancelledError):
                    await asyncio.shield(self._release())

    async def try_once(self) -> bool:
        """One acquire-or-renew round; True if we hold the Lease afterwards."""
        started = self.clock()
        path = paths.resource(API, "leases", namespace=self.namespace, name=self.name)
        try:
            lease = await self.api.request("GET", path)
        except errors.ApiError as exc:
            if exc.status != 404:
                raise
            return await self._create(started)
        meta, spec = lease.get("metadata") or {}, lease.get("spec") or {}
        rv = str(meta.get("resourceVersion", ""))
        if rv != self._observed[0]:
            self._observed = (rv, started)
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or self.lease_seconds)
        if holder and holder != self.identity and started < self._observed[1] + duration:
            self._valid_until = 0.0
            return False
        now = _micro_now()
        ours = holder == self.identity
        lease["metadata"] = owners.adopt(meta, self.owner)
        lease["spec"] = {
            **spec,
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_seconds),
            "acquireTime": spec.get("acquireTime") if ours else now,
            "renewTime": now,
            "leaseTransitions": int(spec.get("leaseTransitions") or 0) + (0 if ours else 1),
        }
        try:
            updated = await self.api.request("PUT", path, body=lease)
        except errors.ApiError as exc:
            if exc.status != 409:
                raise
            self._valid_until = 0.0  # someone else wrote first
            return False
        self._rv = str(updated.get("metadata", {}).get("resourceVersion", ""))
        self._valid_until = started + self.renew_seconds
        return True

    async def _create(self, started: float) -> bool:
        now = _micro_now()
        body = {
            "apiVersion": API,
            "kind": "Lease",
            "metadata": owners.adopt({"name": self.name, "namespace": self.namespace}, self.owner),
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": int(self.lease_seconds),
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            },
        }
        try:
            created = await self.api.request("POST", paths.resource(API, "leases", namespace=self.namespace), body=body)
        except errors.ApiError as exc:
            if exc.status != 409:
                raise
            return False
        self._rv = str(created.get("metadata", {}).get("resourceVersion", ""))
        self._valid_until = started + self.renew_seconds
        return True

    async def _release(self) -> None:
        """Hand the Lease back (client-go's ReleaseOnCancel); the PUT carries the version read."""
        self._valid_until = 0.0
        path = paths.resource(API, "leases", namespace=self.namespace, name=self.name)
        body = released(await self.api.request("GET", path), self.identity, now=_micro_now())
        if body is not None:
            await self.api.request("PUT", path, body=body)
            log.info("released the Lease %s/%s", self.namespace, self.name)


def released(lease: dict[str, Any], identity: str, *, now: str) -> dict[str, Any] | None:
    """The Lease handed back by ``identity``, as client-go's ``ReleaseOnCancel`` writes it: no
    holder, a one-second duration, renewed and acquired ``now``, transitions kept. ``None`` when
    someone else holds it (nothing of ours to give back). Pure."""
    spec = lease.get("spec") or {}
    if spec.get("holderIdentity") != identity:
        return None
    return {
        **lease,
        "spec": {
            **spec,
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
        },
    }
