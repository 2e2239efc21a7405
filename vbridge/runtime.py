"""The composition root: facts, the admission server and the reconcilers, run together.

``Bridge.run`` serves until cancelled. ``register`` installs the MutatingWebhookConfiguration
that points the apiserver at this process (by URL, for local clusters; the Helm chart uses a
Service instead).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import pathlib

from bridge import defaults, facts
from bridge.k8s import client, paths, writes
from vbridge.controllers import templates, wiring
from webhooks import configuration, server

__all__ = ["NAME", "Bridge", "register", "unregister"]

NAME = configuration.NAME

log = logging.getLogger(__name__)
TEMPLATES = pathlib.Path(__file__).resolve().parents[1] / "podgroup_templates"


@dataclasses.dataclass
class Bridge:
    api: client.Client
    settings: server.Settings
    templates_dir: pathlib.Path = TEMPLATES
    facts: facts.Facts = dataclasses.field(default_factory=facts.Facts)
    started: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    async def run(self) -> None:
        reconcilers = wiring.reconcilers(
            self.api,
            self.facts,
            scheduler_name=self.settings.scheduler_name,
            templates_by_name=templates.load(self.templates_dir),
        )
        serving = asyncio.Event()
        work = [
            self.facts.run(self.api),
            server.serve(server.App(self.facts, self.settings), started=serving),
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
) -> None:
    body = configuration.build(
        ca_bundle=ca_bundle,
        url=url,
        exclude_namespaces=(defaults.SYSTEM_NAMESPACE, *exclude_namespaces),
        scheduler_name=scheduler_name,
    )
    base = paths.resource("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations")
    await writes.create_or_replace(api, base, body)


async def unregister(api: client.Client) -> None:
    base = paths.resource("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations")
    await writes.delete(api, f"{base}/{configuration.NAME}")
