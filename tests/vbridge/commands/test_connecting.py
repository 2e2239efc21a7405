"""Every command that talks to a cluster takes --kubeconfig and --context and finds its cluster the same way."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from vbridge import cli
from vbridge.commands import connecting

COMMANDS = [
    ["serve", "--tls-cert=absent.crt", "--tls-key=absent.key"],
    ["scheduler"],
    ["explain", "podgroup", "ns/pg"],
    ["job", "list"],
    ["job", "view", "j"],
    ["job", "suspend", "j"],
    ["queue", "list"],
    ["queue", "create", "q"],
    ["list"],
]


def _two_contexts(path: pathlib.Path) -> pathlib.Path:
    names = ("one", "two")
    doc = {
        "clusters": [{"name": n, "cluster": {"server": f"https://{n}"}} for n in names],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "u"}} for n in names],
        "current-context": "one",
    }
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_flags_name_the_connection(argv: list[str], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kubeconfig = _two_contexts(tmp_path / "kc")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "elsewhere"))
    args = cli.parser(argv[0]).parse_args([*argv, f"--kubeconfig={kubeconfig}", "--context=two"])
    assert connecting.connection(args).server == "https://two"
    args = cli.parser(argv[0]).parse_args(argv)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    assert connecting.connection(args).server == "https://one"


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_with_only_the_home_kubeconfig_every_command_connects(
    argv: list[str], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's case: ``job list`` worked, ``explain`` said "not running in a cluster" and
    ``scheduler`` "no kubeconfig"; now every command finds ``~/.kube/config`` as kubectl does."""
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".kube").mkdir()
    _two_contexts(tmp_path / ".kube" / "config")
    assert connecting.connection(cli.parser(argv[0]).parse_args(argv)).server == "https://one"
    assert connecting.connection(cli.parser(argv[0]).parse_args([*argv, "--context=two"])).server == "https://two"


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_no_cluster_is_one_clear_error(
    argv: list[str], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cli.main(argv) == 1  # a runtime error: 2 is only for a command line that cannot be read
    err = capsys.readouterr().err
    assert err.startswith("vbridge: error: no cluster to connect to; tried: no --kubeconfig; $KUBECONFIG not set;")
    assert f"{tmp_path / '.kube' / 'config'}: no such file" in err


def test_the_namespace_defaults_to_the_kubeconfig_context(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        "contexts:\n- name: a\n  context: {cluster: c, user: u, namespace: team-a}\n"
        "- name: b\n  context: {cluster: c, user: u}\n"
    )

    def namespace(*argv: str, env: dict[str, str]) -> str:
        return connecting.namespace(cli.parser("job").parse_args(["job", "list", *argv]), env=env)

    assert namespace("--kubeconfig", str(config), env={}) == "team-a"
    assert namespace("--kubeconfig", str(config), "--context", "b", env={}) == "default"
    assert namespace(env={"KUBECONFIG": str(config)}) == "team-a"
    assert namespace("-n", "mine", env={"KUBECONFIG": str(config)}) == "mine"
    assert namespace(env={"HOME": str(tmp_path)}) in ("default", "team-a")
