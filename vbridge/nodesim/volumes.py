"""A pod's volumes as files to write, and each container's mounts. Pure.

:func:`with_service_account` adds what the ServiceAccount admission plugin would (it is off on
the test bed): a projected ``kube-api-access-sim`` volume (token, ``ca.crt`` from the
``kube-root-ca.crt`` ConfigMap, ``namespace``) mounted at the service-account path in every
container, unless ``automountServiceAccountToken`` is false or a mount is already there.
:func:`needs` says which ConfigMaps, Secrets and tokens the volumes read; :func:`render` turns
one volume into :class:`File` entries from :class:`Sources`, or ``None`` for an emptyDir.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

from vbridge.nodesim import envvars

__all__ = [
    "ROOT_CA",
    "SA_PATH",
    "SA_VOLUME",
    "TOKEN_SECONDS",
    "File",
    "Mount",
    "Needs",
    "Sources",
    "TokenKey",
    "mounts",
    "needs",
    "render",
    "with_service_account",
]

SA_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
SA_VOLUME = "kube-api-access-sim"
ROOT_CA = "kube-root-ca.crt"
TOKEN_SECONDS = 3607  # what the admission plugin asks for


@dataclasses.dataclass(frozen=True)
class File:
    path: str  # relative to the volume's folder
    data: bytes
    mode: int


@dataclasses.dataclass(frozen=True)
class Mount:
    volume: str
    path: str
    sub_path: str = ""
    read_only: bool = False


TokenKey = tuple[str, int]  # (audience, expirationSeconds); "" is the apiserver's own audience


@dataclasses.dataclass(frozen=True)
class Needs:
    configmaps: frozenset[str] = frozenset()
    secrets: frozenset[str] = frozenset()
    tokens: frozenset[TokenKey] = frozenset()


@dataclasses.dataclass(frozen=True)
class Sources:
    pod: Mapping[str, Any]
    configmaps: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    secrets: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    tokens: Mapping[TokenKey, str] = dataclasses.field(default_factory=dict)


def with_service_account(pod: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(pod))
    spec = out.setdefault("spec", {})
    if spec.get("automountServiceAccountToken") is False:
        return out
    volume = {
        "name": SA_VOLUME,
        "projected": {
            "defaultMode": 0o644,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}},
                {"configMap": {"name": ROOT_CA, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
            ],
        },
    }
    added = False
    for container in spec.get("containers", []) + spec.get("initContainers", []):
        if any(m.get("mountPath", "").rstrip("/") == SA_PATH for m in container.get("volumeMounts") or []):
            continue
        container.setdefault("volumeMounts", []).append({"name": SA_VOLUME, "mountPath": SA_PATH, "readOnly": True})
        added = True
    if added:
        spec.setdefault("volumes", []).append(volume)
    return out


def _sources(volume: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if "projected" in volume:
        return list(volume["projected"].get("sources") or [])
    return [{k: volume[k]} for k in ("configMap", "secret", "downwardAPI") if k in volume]


def needs(pod: Mapping[str, Any]) -> Needs:
    cms: set[str] = set()
    secrets: set[str] = set()
    tokens: set[TokenKey] = set()
    for volume in pod.get("spec", {}).get("volumes") or []:
        for source in _sources(volume):
            if "configMap" in source:
                cms.add(source["configMap"].get("name", ""))
            if "secret" in source:
                secrets.add(source["secret"].get("secretName") or source["secret"].get("name", ""))
            if "serviceAccountToken" in source:
                sat = source["serviceAccountToken"]
                tokens.add((sat.get("audience", ""), int(sat.get("expirationSeconds", 3600))))
    for container in pod.get("spec", {}).get("containers", []) + pod.get("spec", {}).get("initContainers", []):
        for item in container.get("env") or []:
            ref = item.get("valueFrom") or {}
            if "configMapKeyRef" in ref:
                cms.add(ref["configMapKeyRef"].get("name", ""))
            if "secretKeyRef" in ref:
                secrets.add(ref["secretKeyRef"].get("name", ""))
        for source in container.get("envFrom") or []:
            if "configMapRef" in source:
                cms.add(source["configMapRef"].get("name", ""))
            if "secretRef" in source:
                secrets.add(source["secretRef"].get("name", ""))
    return Needs(frozenset(cms), frozenset(secrets), frozenset(tokens))


def _keyed(
    source: Mapping[str, Any], obj: Mapping[str, Any] | None, *, secret: bool, mode: int, what: str
) -> list[File]:
    if obj is None:
        if source.get("optional"):
            return []
        raise envvars.Missing(f"{what} not found")
    mode = int(source.get("defaultMode", mode))
    items = source.get("items")
    if items is None:
        keys = list(obj.get("data") or {}) + ([] if secret else list(obj.get("binaryData") or {}))
        items = [{"key": k, "path": k} for k in keys]
    files = []
    for item in items:
        value = envvars.object_value(obj, item["key"], secret=secret)
        if value is None:
            if source.get("optional"):
                continue
            raise envvars.Missing(f"{what}: key {item['key']!r} not found")
        files.append(File(item.get("path", item["key"]), value, int(item.get("mode", mode))))
    return files


def render(volume: Mapping[str, Any], src: Sources) -> list[File] | None:
    """The files of one volume; None for an emptyDir (or any kind that is just a folder)."""
    if not any(k in volume for k in ("projected", "configMap", "secret", "downwardAPI")):
        return None
    mode = int(volume.get("projected", {}).get("defaultMode", 0o644))
    files: list[File] = []
    for source in _sources(volume):
        if "configMap" in source:
            cm = source["configMap"]
            name = cm.get("name", "")
            files += _keyed(cm, src.configmaps.get(name), secret=False, mode=mode, what=f"ConfigMap {name!r}")
        elif "secret" in source:
            sec = source["secret"]
            name = sec.get("secretName") or sec.get("name", "")
            files += _keyed(sec, src.secrets.get(name), secret=True, mode=mode, what=f"Secret {name!r}")
        elif "downwardAPI" in source:
            dapi = source["downwardAPI"]
            for item in dapi.get("items") or []:
                if "fieldRef" not in item:
                    continue  # resourceFieldRef: no limits to report
                value = envvars.field(src.pod, item["fieldRef"]["fieldPath"]).encode()
                files.append(File(item["path"], value, int(item.get("mode", dapi.get("defaultMode", mode)))))
        elif "serviceAccountToken" in source:
            sat = source["serviceAccountToken"]
            key = (sat.get("audience", ""), int(sat.get("expirationSeconds", 3600)))
            if key not in src.tokens:
                raise envvars.Missing(f"token for audience {key[0] or 'default'!r} not issued yet")
            files.append(File(sat.get("path", "token"), src.tokens[key].encode(), mode))
    return files


def mounts(container: Mapping[str, Any]) -> list[Mount]:
    return [
        Mount(
            volume=m["name"],
            path=m["mountPath"],
            sub_path=m.get("subPath", ""),
            read_only=bool(m.get("readOnly", False)),
        )
        for m in container.get("volumeMounts") or []
    ]
