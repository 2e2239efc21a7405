"""A container's environment as the kubelet builds it. Pure: the caller hands in the objects.

Order and rules are the kubelet's: ``envFrom`` first (a prefix per source), then ``env`` in
order, each value ``$(VAR)``-expanded against what came before; ``$$`` escapes a ``$``; an
unknown ``$(VAR)`` stays as written. A missing ConfigMap, Secret or key that is not
``optional`` is :class:`Missing` (the kubelet's CreateContainerConfigError).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["Missing", "expand", "field", "in_cluster", "object_value", "resolve"]

_INDEXED = re.compile(r"^metadata\.(labels|annotations)\['(.+)'\]$")


class Missing(Exception):
    """A required ConfigMap, Secret or key is missing; the container waits."""


def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes ``$(VAR)`` expansion: known names replaced, ``$$`` → ``$``, the rest kept."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = text.find(")", i + 2)
                if end != -1:
                    name = text[i + 2 : end]
                    out.append(env[name] if name in env else text[i : end + 1])
                    i = end + 1
                    continue
        out.append(ch)
        i += 1
    return "".join(out)


def field(pod: Mapping[str, Any], path: str) -> str:
    """A ``fieldRef.fieldPath`` of the pod (the downward API)."""
    meta, spec, status = pod.get("metadata", {}), pod.get("spec", {}), pod.get("status", {})
    indexed = _INDEXED.match(path)
    if indexed:
        return str((meta.get(indexed.group(1)) or {}).get(indexed.group(2), ""))
    simple: dict[str, Any] = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName") or "default",
        "status.podIP": status.get("podIP"),
        "status.hostIP": status.get("hostIP"),
        "status.podIPs": ",".join(ip.get("ip", "") for ip in status.get("podIPs") or []),
    }
    if path in ("metadata.labels", "metadata.annotations"):
        items = meta.get(path.split(".")[1]) or {}
        return "\n".join(f'{k}="{v}"' for k, v in sorted(items.items()))
    if path not in simple:
        raise ValueError(f"unsupported fieldPath {path!r}")
    return str(simple[path] or "")


def object_value(obj: Mapping[str, Any] | None, key: str, *, secret: bool) -> bytes | None:
    """One key of a ConfigMap (``data``/``binaryData``) or Secret (``data``, base64), or None."""
    if obj is None:
        return None
    data = obj.get("data") or {}
    if key in data:
        return base64.b64decode(data[key]) if secret else str(data[key]).encode()
    binary = obj.get("binaryData") or {}
    if not secret and key in binary:
        return base64.b64decode(binary[key])
    if secret and key in (obj.get("stringData") or {}):
        return str(obj["stringData"][key]).encode()
    return None


def _keys(obj: Mapping[str, Any], *, secret: bool) -> list[str]:
    keys = list(obj.get("data") or {})
    if not secret:
        keys += list(obj.get("binaryData") or {})
    return keys


def in_cluster(host: str, port: int) -> dict[str, str]:
    """The variables every container gets for the ``kubernetes`` Service."""
    return {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": str(port),
        "KUBERNETES_SERVICE_PORT_HTTPS": str(port),
        "KUBERNETES_PORT": f"tcp://{host}:{port}",
        "KUBERNETES_PORT_443_TCP": f"tcp://{host}:{port}",
        "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
        "KUBERNETES_PORT_443_TCP_PORT": str(port),
        "KUBERNETES_PORT_443_TCP_ADDR": host,
    }


def _ref(
    kind: str, ref: Mapping[str, Any], objects: Mapping[str, Mapping[str, Any]], *, secret: bool, what: str
) -> bytes | None:
    name, key, optional = ref.get("name", ""), ref.get("key", ""), bool(ref.get("optional"))
    value = object_value(objects.get(name), key, secret=secret)
    if value is None and not optional:
        raise Missing(f"{what}: {kind} {name!r} key {key!r} not found")
    return value


def resolve(
    container: Mapping[str, Any],
    pod: Mapping[str, Any],
    *,
    configmaps: Mapping[str, Mapping[str, Any]],
    secrets: Mapping[str, Mapping[str, Any]],
    base: Mapping[str, str] = {},
) -> dict[str, str]:
    """``base`` (image and in-cluster variables), then ``envFrom``, then ``env``."""
    env = dict(base)
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix", "")
        for kind, secret, objects in (("configMapRef", False, configmaps), ("secretRef", True, secrets)):
            ref = source.get(kind)
            if ref is None:
                continue
            obj = objects.get(ref.get("name", ""))
            if obj is None:
                if not ref.get("optional"):
                    raise Missing(f"envFrom: {kind} {ref.get('name')!r} not found")
                continue
            for key in _keys(obj, secret=secret):
                value = object_value(obj, key, secret=secret)
                env[prefix + key] = (value or b"").decode(errors="replace")
    for item in container.get("env") or []:
        name = item["name"]
        if "value" in item or "valueFrom" not in item:
            env[name] = expand(str(item.get("value", "")), env)
            continue
        source = item["valueFrom"]
        if "fieldRef" in source:
            env[name] = field(pod, source["fieldRef"]["fieldPath"])
        elif "configMapKeyRef" in source:
            value = _ref("ConfigMap", source["configMapKeyRef"], configmaps, secret=False, what=name)
            if value is not None:
                env[name] = value.decode(errors="replace")
        elif "secretKeyRef" in source:
            value = _ref("Secret", source["secretKeyRef"], secrets, secret=True, what=name)
            if value is not None:
                env[name] = value.decode(errors="replace")
        else:  # resourceFieldRef: the simulator has no cgroup limits to report
            env[name] = ""
    return env
