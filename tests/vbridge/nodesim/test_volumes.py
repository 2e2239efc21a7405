from __future__ import annotations

import base64
import pathlib
from typing import Any

import pytest

from vbridge.nodesim import atomicdir, envvars, volumes

POD: dict[str, Any] = {
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
    "spec": {
        "serviceAccountName": "sa",
        "containers": [{"name": "a", "volumeMounts": [{"name": "tls", "mountPath": "/tls", "readOnly": True}]}],
        "volumes": [
            {"name": "tls", "secret": {"secretName": "cert", "defaultMode": 0o400}},
            {
                "name": "cfg",
                "configMap": {"name": "settings", "items": [{"key": "g", "path": "sub/g.txt", "mode": 0o600}]},
            },
            {"name": "tmp", "emptyDir": {}},
        ],
    },
}
SECRET = {"data": {"tls.crt": base64.b64encode(b"CERT").decode(), "tls.key": base64.b64encode(b"KEY").decode()}}


def sources(pod: dict[str, Any], **kw: Any) -> volumes.Sources:
    base: dict[str, Any] = {
        "configmaps": {"settings": {"data": {"g": "hi"}}, volumes.ROOT_CA: {"data": {"ca.crt": "CA"}}},
        "secrets": {"cert": SECRET},
        "tokens": {("", volumes.TOKEN_SECONDS): "TOKEN"},
    }
    return volumes.Sources(pod, **{**base, **kw})


def test_service_account_volume_is_added_as_the_admission_plugin_would() -> None:
    pod = volumes.with_service_account(POD)
    mounts = pod["spec"]["containers"][0]["volumeMounts"]
    assert mounts[-1] == {"name": volumes.SA_VOLUME, "mountPath": volumes.SA_PATH, "readOnly": True}
    assert "volumeMounts" not in POD["spec"]["containers"][0] or len(POD["spec"]["containers"][0]["volumeMounts"]) == 1
    sa = next(v for v in pod["spec"]["volumes"] if v["name"] == volumes.SA_VOLUME)
    files = {f.path: f.data for f in volumes.render(sa, sources(pod)) or []}
    assert files == {"token": b"TOKEN", "ca.crt": b"CA", "namespace": b"ns"}
    off = volumes.with_service_account({**POD, "spec": {**POD["spec"], "automountServiceAccountToken": False}})
    assert all(v["name"] != volumes.SA_VOLUME for v in off["spec"]["volumes"])


def test_needs_lists_every_source() -> None:
    needs = volumes.needs(volumes.with_service_account(POD))
    assert needs.secrets == {"cert"} and needs.configmaps == {"settings", volumes.ROOT_CA}
    assert needs.tokens == {("", volumes.TOKEN_SECONDS)}


def test_render_modes_items_and_empty_dir() -> None:
    tls, cfg, tmp = POD["spec"]["volumes"]
    assert volumes.render(tls, sources(POD)) == [
        volumes.File("tls.crt", b"CERT", 0o400),
        volumes.File("tls.key", b"KEY", 0o400),
    ]
    assert volumes.render(cfg, sources(POD)) == [volumes.File("sub/g.txt", b"hi", 0o600)]
    assert volumes.render(tmp, sources(POD)) is None
    with pytest.raises(envvars.Missing):
        volumes.render(tls, sources(POD, secrets={}))
    optional = {"name": "o", "secret": {"secretName": "cert", "optional": True}}
    assert volumes.render(optional, sources(POD, secrets={})) == []


def test_atomic_writes_swap_and_report_changes(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "vol"
    assert atomicdir.write(folder, [volumes.File("a", b"1", 0o644), volumes.File("d/b", b"2", 0o600)])
    assert (folder / "a").read_bytes() == b"1" and (folder / "d" / "b").read_bytes() == b"2"
    assert (folder / "a").is_symlink() and (folder / atomicdir.DATA).is_symlink()
    assert not atomicdir.write(folder, [volumes.File("a", b"1", 0o644), volumes.File("d/b", b"2", 0o600)])
    assert atomicdir.write(folder, [volumes.File("a", b"3", 0o644)])
    assert (folder / "a").read_bytes() == b"3" and not (folder / "d").exists()
    assert len([p for p in folder.iterdir() if p.name.startswith("..") and p.is_dir() and not p.is_symlink()]) == 1
