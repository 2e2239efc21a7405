"""Edits the job plugins make to a pod body: environment, ports, volumes. Pure, in place.

One rule for every plugin: a variable or port the user's template already has is kept (Volcano
appends its own after it, so there the plugin's would win for a variable).
"""

from __future__ import annotations

from typing import Any

__all__ = ["add_env", "containers", "mount", "open_port"]


def containers(pod_spec: dict[str, Any], *, init: bool = True) -> list[dict[str, Any]]:
    """Init containers (unless ``init`` is False), then the containers, as they appear in the pod."""
    return [*(pod_spec.get("initContainers", []) if init else []), *pod_spec.get("containers", [])]


def add_env(container: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    env = container.setdefault("env", [])
    present = {e.get("name") for e in env}
    env.extend(e for e in entries if e["name"] not in present)  # the user's own value wins


def open_port(container: dict[str, Any], name: str, port: int) -> None:
    """Add ``containerPort: port`` named ``name`` unless the container has that port already."""
    ports = container.setdefault("ports", [])
    if not any(p.get("containerPort") == port for p in ports):
        ports.append({"name": name, "containerPort": port})


def mount(pod_spec: dict[str, Any], volume: dict[str, Any], mount: dict[str, Any]) -> None:
    """Add ``volume`` to the pod and ``mount`` to each of its containers and init containers."""
    pod_spec.setdefault("volumes", []).append(volume)
    for c in containers(pod_spec):
        c.setdefault("volumeMounts", []).append(dict(mount))
