from __future__ import annotations

import base64
import pathlib

import pytest
import yaml

from bridge import errors
from bridge.k8s import kubeconfigs


def test_write_then_load(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "kc"
    kubeconfigs.write(
        path, server="https://127.0.0.1:6443/", ca=tmp_path / "ca", cert=tmp_path / "c", key=tmp_path / "k"
    )
    conn = kubeconfigs.load(path)
    assert conn.server == "https://127.0.0.1:6443"
    assert (conn.ca_file, conn.cert_file, conn.key_file) == (tmp_path / "ca", tmp_path / "c", tmp_path / "k")
    assert path.stat().st_mode & 0o077 == 0


def test_inline_data_is_written_to_private_files(tmp_path: pathlib.Path) -> None:
    doc = {
        "clusters": [
            {
                "name": "c",
                "cluster": {"server": "https://x", "certificate-authority-data": base64.b64encode(b"CA").decode()},
            }
        ],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    (tmp_path / "kc").write_text(yaml.safe_dump(doc))
    conn = kubeconfigs.load(tmp_path / "kc")
    assert conn.ca_file is not None and conn.ca_file.read_bytes() == b"CA"
    assert conn.token == "t" and conn.cert_file is None


def test_missing_context_is_a_config_error(tmp_path: pathlib.Path) -> None:
    (tmp_path / "kc").write_text(yaml.safe_dump({"current-context": "nope", "contexts": []}))
    with pytest.raises(errors.ConfigError, match="no context named 'nope'"):
        kubeconfigs.load(tmp_path / "kc")
    with pytest.raises(errors.ConfigError, match="cannot read kubeconfig"):
        kubeconfigs.load(tmp_path / "absent")
