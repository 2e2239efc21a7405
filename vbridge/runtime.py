"""The composition root: facts, the admission server and the reconcilers.

``Bridge.run`` serves until cancelled: the facts cache, the HTTPS server and, unless
``reconcile`` is off (``serve --webhook-only``), the reconcilers. ``vbridge controllers`` runs
the reconcilers without a server, behind a Lease: :class:`Controllers`. ``register``
installs the MutatingWebhookConfiguration that points the apiserver at this process (by URL,
for local clusters; the Helm chart uses a Service instead).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import pathlib

from bridge import defaults, probes
from bridge import facts as cluster_facts
from bridge.k8s import backends, client, lease, paths, writes
from vbridge.controllers import certs as cert_controller
from vbridge.controllers import templates as template_files
from vbridge.controllers import wiring
from webhooks import configuration, server

__all__ = ["LEADERSHIP_POLL_SECONDS", "NAME", "TEMPLATES", "Bridge", "Controllers", "register", "unregister"]

NAME = configuration.NAME

log = logging.getLogger(__name__)
TEMPLATES = pathlib.Path(__file__).resolve().parents[1] / "podgroup_templates"
LEADERSHIP_POLL_SECONDS = 0.05  # how soon the reconcilers stop once ``is_leader()`` turns false


@dataclasses.dataclass
class Bridge:
    api: client.Client
    settings: server.Settings
    templates_dir: pathlib.Path = TEMPLATES
    facts: cluster_facts.Facts = dataclasses.field(default_factory=cluster_facts.Facts)
    started: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    reconcile: bool = True  # False: the webhook alone (``serve --webhook-only``)
    backend: str = defaults.BACKEND  # one of defaults.BACKENDS, resolved at run (``backends.resolve``)
    app: server.App | None = None  # once running

    def reconcilers(self) -> list[wiring.Reconciler]:
        """What runs besides the server: nothing for the webhook alone."""
        if not self.reconcile:
            return []
        return wiring.reconcilers(
            self.api,
            self.facts,
            scheduler_name=self.settings.scheduler_name,
            templates_by_name=template_files.load(self.templates_dir),
            backend=self.facts.backend,
        )

    async def run(self) -> None:
        self.facts.backend = await backends.resolve(self.api, self.backend)
        reconcilers = self.reconcilers()
        serving = asyncio.Event()
        self.app = server.App(self.facts, self.settings)
        work = [
            self.facts.run(self.api),
            server.serve(self.app, started=serving),
            *(r.run() for r in reconcilers),
        ]
        tasks = [asyncio.create_task(w) for w in work]
        try:
            while not (serving.is_set() and self.facts.synced):
                done = [t for t in tasks if t.done()]
                if done:
                    await done[0]  # surface a startup failure
                await asyncio.sleep(0.02)
            self.started.set()
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def register(
    api: client.Client,
    *,
    url: str,
    ca_bundle: bytes,
    exclude_namespaces: tuple[str, ...] = (),
    scheduler_name: str = defaults.SCHEDULER_NAME,
    backend: str = defaults.BACKEND,
) -> None:
    body = configuration.build(
        ca_bundle=ca_bundle,
        url=url,
        exclude_namespaces=(defaults.SYSTEM_NAMESPACE, *exclude_namespaces),
        scheduler_name=scheduler_name,
        backend=await backends.resolve(api, backend),
    )
    base = paths.resource("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations")
    await writes.create_or_replace(api, base, body)


async def unregister(api: client.Client) -> None:
    base = paths.resource("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations")
    await writes.delete(api, f"{base}/{configuration.NAME}")


@dataclasses.dataclass
class Controllers:
    """The reconcilers (and the webhook certificate, when managed), run only while leading.

    Without an ``elector`` they run as soon as the facts are synced. With one they start fresh
    (they relist) on every gain of the Lease and are cancelled as soon as ``is_leader()`` turns
    false, which is before another candidate may take over. A standby keeps its facts synced, so
    it is ready (``/readyz``) and takes over with a warm cache.
    """

    api: client.Client
    scheduler_name: str = defaults.SCHEDULER_NAME
    templates_dir: pathlib.Path = TEMPLATES
    elector: lease.Elector | None = None
    vcjobs: bool = True
    backend: str = defaults.BACKEND  # one of defaults.BACKENDS, resolved at run
    certs: cert_controller.Manager | None = None
    health: tuple[str, int] | None = None  # (host, port) of /healthz and /readyz
    facts: cluster_facts.Facts = dataclasses.field(default_factory=cluster_facts.Facts)
    leading: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)  # set while reconciling
    terms: int = 0  # times the reconcilers were started
    health_port: int = 0  # bound port, once serving
    _electing: asyncio.Task[None] | None = None

    def workers(self) -> list[wiring.Reconciler]:
        """A fresh set for a term: the reconcilers, and the certificate manager if any."""
        out = wiring.reconcilers(
            self.api,
            self.facts,
            scheduler_name=self.scheduler_name,
            templates_by_name=template_files.load(self.templates_dir),
            vcjobs=self.vcjobs,
            backend=self.facts.backend,
        )
        if self.certs is not None:
            out.append(self.certs)
        return out

    def leader(self) -> bool:
        return self.elector is None or self.elector.is_leader()

    def healthy(self) -> bool:
        return self.elector is None or (self._electing is not None and not self._electing.done())

    def ready(self) -> bool:
        return self.facts.synced

    async def run(self) -> None:
        self.facts.backend = await backends.resolve(self.api, self.backend)
        self.workers()  # a bad template folder fails at start, not at the first gain of the Lease
        lead = asyncio.create_task(self._lead())
        others = [asyncio.create_task(self.facts.run(self.api))]
        if self.elector is not None:
            self._electing = asyncio.create_task(self.elector.run())
            others.append(self._electing)
        if self.health is not None:
            others.append(asyncio.create_task(self._serve_health(*self.health)))
        try:
            # Not gather: cancelling it would cancel every child at once, the elector (which then
            # hands the Lease back) possibly before the reconcilers stopped.
            done, _ = await asyncio.wait([lead, *others], return_when=asyncio.FIRST_EXCEPTION)
            for t in done:
                await t
        finally:
            # The reconcilers stop first, then the elector hands the Lease back: never both leading.
            lead.cancel()
            await asyncio.gather(lead, return_exceptions=True)
            for t in others:
                t.cancel()
            await asyncio.gather(*others, return_exceptions=True)

    async def _lead(self) -> None:
        while True:
            while not (self.facts.synced and self.leader()):
                await asyncio.sleep(LEADERSHIP_POLL_SECONDS)
            self.terms += 1
            log.info("leading (term %d): starting the reconcilers", self.terms)
            work = [asyncio.create_task(w.run()) for w in self.workers()]
            self.leading.set()
            try:
                while self.leader() and not any(t.done() for t in work):
                    await asyncio.sleep(LEADERSHIP_POLL_SECONDS)
                for t in work:
                    if t.done():
                        await t  # a reconciler that failed fails the process
            finally:
                self.leading.clear()
                for t in work:
                    t.cancel()
                await asyncio.gather(*work, return_exceptions=True)
            log.warning("lost the Lease: reconcilers stopped")

    async def _serve_health(self, host: str, port: int) -> None:
        def bound(actual: int) -> None:
            self.health_port = actual

        routes: dict[str, probes.Handler] = {
            "/healthz": lambda: probes.check(self.healthy()),
            "/readyz": lambda: probes.check(self.ready()),
        }
        await probes.serve(routes, host=host, port=port, on_bound=bound)
