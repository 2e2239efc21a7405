from __future__ import annotations

import pathlib
import tomllib

import pytest

from vbridge import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_version_is_the_package_metadata_of_pyproject(capsys: pytest.CaptureFixture[str]) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"vbridge {declared}\n"
    assert cli.version() == declared


def test_bare_vbridge_prints_the_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: vbridge")
    for command in ("up", "serve", "scheduler", "explain", "job", "queue", "translate"):
        assert command in err
    assert "run a local control plane" in err  # the full help, not only the usage line
