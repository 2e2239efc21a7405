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


def _kubeconfig(path: pathlib.Path, *servers: str, current: str | None = None, **user: str) -> pathlib.Path:
    """A kubeconfig with one context per server, named after it; the first is current unless told."""
    names = [s.removeprefix("https://") for s in servers]
    doc = {
        "clusters": [{"name": n, "cluster": {"server": s}} for n, s in zip(names, servers, strict=True)],
        "users": [{"name": n, "user": dict(user)} for n in names],
        "contexts": [{"name": n, "context": {"cluster": n, "user": n}} for n in names],
        "current-context": names[0] if current is None else current,
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def _service_account(folder: pathlib.Path, token: str = "sa-token", ca: bool = True) -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "token").write_text(token + "\n")
    if ca:
        (folder / "ca.crt").write_text("CA")
    return folder


IN_POD = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}


def test_the_flag_wins_over_the_environment_home_and_pod(tmp_path: pathlib.Path) -> None:
    flag = _kubeconfig(tmp_path / "flag", "https://flag")
    env = {"KUBECONFIG": str(_kubeconfig(tmp_path / "env", "https://env")), **IN_POD}
    (tmp_path / ".kube").mkdir()
    _kubeconfig(tmp_path / ".kube" / "config", "https://home")
    sa = _service_account(tmp_path / "sa")
    conn = kubeconfigs.resolve(str(flag), env=env, home=tmp_path, service_account=sa)
    assert conn.server == "https://flag"


def test_a_missing_flag_file_is_an_error_not_a_fallback(tmp_path: pathlib.Path) -> None:
    env = {"KUBECONFIG": str(_kubeconfig(tmp_path / "env", "https://env"))}
    with pytest.raises(errors.ConfigError, match=r"cannot read kubeconfig .*absent"):
        kubeconfigs.resolve(str(tmp_path / "absent"), env=env, home=tmp_path)


def test_the_environment_wins_over_home_and_its_files_merge_first_wins(tmp_path: pathlib.Path) -> None:
    first = _kubeconfig(tmp_path / "a", "https://a", current="")
    second = _kubeconfig(tmp_path / "b", "https://a-again", "https://b", current="b")
    (tmp_path / ".kube").mkdir()
    _kubeconfig(tmp_path / ".kube" / "config", "https://home")
    env = {"KUBECONFIG": f"{tmp_path / 'missing'}:{first}:{second}"}
    assert kubeconfigs.resolve(None, env=env, home=tmp_path).server == "https://b"  # current-context of b
    assert kubeconfigs.resolve(None, context="a", env=env, home=tmp_path).server == "https://a"


def test_an_environment_without_a_file_skips_home_for_the_pod(tmp_path: pathlib.Path) -> None:
    (tmp_path / ".kube").mkdir()
    _kubeconfig(tmp_path / ".kube" / "config", "https://home")
    env = {"KUBECONFIG": str(tmp_path / "missing"), **IN_POD}
    conn = kubeconfigs.resolve(None, env=env, home=tmp_path, service_account=_service_account(tmp_path / "sa"))
    assert conn.server == "https://10.0.0.1:443"


def test_home_is_read_when_the_environment_is_unset(tmp_path: pathlib.Path) -> None:
    (tmp_path / ".kube").mkdir()
    _kubeconfig(tmp_path / ".kube" / "config", "https://home", token="t")
    conn = kubeconfigs.resolve(None, env={**IN_POD}, home=tmp_path, service_account=_service_account(tmp_path / "sa"))
    assert (conn.server, conn.token) == ("https://home", "t")
    assert kubeconfigs.resolve(None, env={"HOME": str(tmp_path)}).server == "https://home"  # home from env


def test_the_pod_service_account_comes_last(tmp_path: pathlib.Path) -> None:
    sa = _service_account(tmp_path / "sa")
    conn = kubeconfigs.resolve(None, env=IN_POD, home=tmp_path, service_account=sa)
    assert conn == kubeconfigs.Connection("https://10.0.0.1:443", sa / "ca.crt", None, None, "sa-token")


def test_in_cluster_reads_the_mounted_folder(tmp_path: pathlib.Path) -> None:
    sa = _service_account(tmp_path / "sa", token="abc", ca=False)
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"}
    conn = kubeconfigs.in_cluster(sa, env)
    assert (conn.server, conn.token, conn.ca_file) == ("https://[fd00::1]:6443", "abc", None)
    with pytest.raises(errors.ConfigError, match="KUBERNETES_SERVICE_HOST/PORT not set"):
        kubeconfigs.in_cluster(sa, {})
    with pytest.raises(errors.ConfigError, match="no service-account token"):
        kubeconfigs.in_cluster(tmp_path / "elsewhere", env)


def test_nothing_found_lists_what_was_tried(tmp_path: pathlib.Path) -> None:
    with pytest.raises(kubeconfigs.NoConnectionError) as caught:
        kubeconfigs.resolve(None, env={}, home=tmp_path, service_account=tmp_path / "sa")
    message = str(caught.value)
    home = str(tmp_path / ".kube" / "config")
    for tried in ("no --kubeconfig", "$KUBECONFIG not set", f"{home}: no such file", "in-cluster: not in a pod"):
        assert tried in message
    assert isinstance(caught.value, errors.BridgeError)
    env = {"KUBECONFIG": str(tmp_path / "gone"), **IN_POD}
    sa = _service_account(tmp_path / "sa")
    with pytest.raises(kubeconfigs.NoConnectionError, match=r"\$KUBECONFIG=.*gone: no such file.*context 'x'"):
        kubeconfigs.resolve(None, context="x", env=env, home=tmp_path, service_account=sa)


def test_context_picks_a_named_one_or_fails_clearly(tmp_path: pathlib.Path) -> None:
    path = _kubeconfig(tmp_path / "kc", "https://one", "https://two")
    assert kubeconfigs.load(path).server == "https://one"
    assert kubeconfigs.load(path, context="two").server == "https://two"
    with pytest.raises(errors.ConfigError, match="no context named 'three'"):
        kubeconfigs.load(path, context="three")
    with pytest.raises(errors.ConfigError, match="no current-context"):
        kubeconfigs.load(_kubeconfig(tmp_path / "none", "https://one", current=""))


def test_relative_files_are_relative_to_their_kubeconfig(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    (folder / "token").write_text("from-file\n")
    path = _kubeconfig(folder / "kc", "https://x", **{"client-certificate": "c.crt", "tokenFile": "token"})
    conn = kubeconfigs.load(path)
    assert (conn.cert_file, conn.token) == (folder / "c.crt", "from-file")
