"""What a Volcano Job owns besides its pods: the PodGroup, and the svc/ssh plugins' Service,
ConfigMap, NetworkPolicy and Secret (pure part: ``bridge.adapters.vcjob.podgroup`` and
``plugins``). Each is made once, owned by the job (garbage-collected with it); one that exists
already is left as it is (409), and the PodGroup is corrected by ``podgroup_io.ensure``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bridge import errors, podgroups
from bridge.adapters.vcjob import names, plugins, podgroup
from bridge.k8s import client, events, paths
from vbridge.controllers import podgroup_io

__all__ = ["make", "new_keypair"]

_PLURALS = {"Service": "services", "ConfigMap": "configmaps", "Secret": "secrets", "NetworkPolicy": "networkpolicies"}


def new_keypair() -> plugins.KeyPair:
    """A fresh RSA-2048 key pair for the ssh plugin (random, hence here and not in the core)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return plugins.KeyPair(private_pem=private.decode(), public_openssh=public.decode() + "\n")


async def make(api: client.Client, job: dict[str, Any]) -> None:
    """The PodGroup, then the plugins' Service, ConfigMap, NetworkPolicy and Secret, all owned by the job."""
    meta = job["metadata"]
    owner = podgroups.owner_ref(job)
    classes = await api.request("GET", paths.resource("scheduling.k8s.io/v1", "priorityclasses"))
    priorities = {c["metadata"]["name"]: int(c.get("value", 0)) for c in classes.get("items", [])}
    group = podgroup.build(job, priorities)
    group["metadata"]["ownerReferences"] = [owner]
    if await podgroup_io.ensure(api, group) == "created":
        spec_ = group["spec"]
        await events.emit(
            api,
            job,
            reason="PodGroupCreated",
            message=f"PodGroup {group['metadata']['name']}: minMember {spec_['minMember']}, queue {spec_['queue']}",
        )
    keys = None
    if "ssh" in (job["spec"].get("plugins") or {}):
        try:
            await api.request(
                "GET", paths.resource("v1", "secrets", namespace=meta["namespace"], name=names.secret(meta["name"]))
            )
        except errors.ApiError as exc:
            if exc.status != 404:
                raise
            keys = await asyncio.to_thread(new_keypair)  # ~0.1 s of CPU: keep the loop free
    for obj in plugins.objects(job, keys):
        obj["metadata"]["ownerReferences"] = [owner]
        path = paths.resource(obj["apiVersion"], _PLURALS[obj["kind"]], namespace=meta["namespace"])
        try:
            await api.request("POST", path, body=obj)
        except errors.ApiError as exc:
            if exc.status != 409:
                raise
