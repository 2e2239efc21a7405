"""The ``vbridge`` command line itself: version, help on every option, usage errors, exit codes, ``vbridge dev``."""

from __future__ import annotations

import argparse
import pathlib
import tomllib
from collections.abc import Iterator

import aiohttp
import pytest

from tests.support import golden
from vbridge import cli
from vbridge.commands import output

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = pathlib.Path(__file__).parent / "golden"
# The commands people run (the rest are services the chart starts, and `dev`): each shows examples.
USER_COMMANDS = [
    ("up",),
    ("list",),
    ("explain",),
    ("translate",),
    ("simulate",),
    ("doctor",),
    ("job", "list"),
    ("job", "view"),
    ("queue", "list"),
    ("queue", "create"),
    ("dev", "crds"),
]


def _parsers(
    p: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, p
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


ALL = dict(_parsers(cli.parser()))


def test_version_is_the_package_metadata_of_pyproject(capsys: pytest.CaptureFixture[str]) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"vbridge {declared}\n"
    assert cli.main(["version"]) == 0
    assert capsys.readouterr().out == f"vbridge {declared}\n"
    assert cli.version() == declared


def test_bare_vbridge_prints_the_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: vbridge [-h] [--version] COMMAND ...")
    for command in ("up", "list", "serve", "scheduler", "explain", "job", "queue", "translate", "dev", "version"):
        assert f"\n    {command} " in err or f"\n    {command}\n" in err
    assert "run a local control plane" in err and "examples:" in err  # the full help, not only the usage line


def test_the_top_level_help(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    golden.check(GOLDEN, "help.txt", capsys.readouterr().out)


@pytest.mark.parametrize("path", sorted(ALL), ids=" ".join)
def test_every_option_has_help_and_shows_its_default(path: tuple[str, ...]) -> None:
    parser = ALL[path]
    formatter = output.Formatter(parser.prog)
    assert parser.formatter_class is output.Formatter
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help, f"{' '.join(path)} {name}: no help text"
        default = action.default
        if action.option_strings and not isinstance(default, bool) and default not in (None, [], "", argparse.SUPPRESS):
            assert "default" in formatter._get_help_string(action), f"{' '.join(path)} {name}: default not shown"


@pytest.mark.parametrize("path", USER_COMMANDS, ids=" ".join)
def test_user_commands_show_examples(path: tuple[str, ...]) -> None:
    assert "example" in (ALL[path].epilog or ""), f"vbridge {' '.join(path)} --help shows no example"


def test_commands_usage_lines_name_their_own_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    for path, usage in [(("job",), "VERB ..."), (("queue",), "VERB ..."), (("dev",), "COMMAND ...")]:
        parser = ALL[path]
        assert parser.format_usage() == f"usage: vbridge {path[0]} [-h] {usage}\n"
        text = parser.format_help()
        for sub in (sub[-1] for sub in ALL if sub[:-1] == path):
            assert f"\n    {sub} " in text or f"\n    {sub}\n" in text, f"vbridge {path[0]} --help does not list {sub}"
    assert ALL[("queue", "create")].format_usage().startswith("usage: vbridge queue create [-h] [--weight WEIGHT]")


def test_a_usage_error_is_one_line_and_where_the_usage_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["job", "list", "--bogus"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "vbridge: error: unrecognized arguments: --bogus",
        "run 'vbridge job list --help' for usage",
    ]
    with pytest.raises(SystemExit) as done:
        cli.main(["job", "list", "-o", "table"])
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "vbridge job list: error: argument -o/--output: invalid choice: 'table' "
        "(choose from 'wide', 'name', 'yaml', 'json')",
        "run 'vbridge job list --help' for usage",
    ]


def test_developer_commands_are_under_dev(capsys: pytest.CaptureFixture[str]) -> None:
    for old in ("crds", "chart", "build"):
        with pytest.raises(SystemExit) as done:
            cli.main([old, "--check"])
        assert done.value.code == 2
        assert f"invalid choice: '{old}'" in capsys.readouterr().err
    assert ("dev", "crds") in ALL and ("dev", "chart") in ALL and ("dev", "build") in ALL


def test_dev_crds_prints_and_writes_nothing_unless_told(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["dev", "crds"]) == 0
    printed = capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []  # nothing written into the current folder
    assert printed.count("kind: CustomResourceDefinition") == len(list((ROOT / "crds").iterdir()))
    assert printed == "---\n".join(p.read_text() for p in sorted((ROOT / "crds").iterdir(), key=_crd_order))
    assert cli.main(["dev", "crds", "--check"]) == 1  # no crds/ here
    assert "out of date in crds:" in capsys.readouterr().err
    assert cli.main(["dev", "crds", "--write", "--dir", "out"]) == 0
    assert cli.main(["dev", "crds", "--check", "--dir", "out"]) == 0
    assert capsys.readouterr().out.endswith("CRDs in out are up to date\n")


def _crd_order(path: pathlib.Path) -> int:
    from bridge import crdgen

    return [f"{i.group}_{i.plural}.yaml" for i in crdgen.ALL].index(path.name)


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (aiohttp.ClientConnectionError("refused"), "cannot reach the apiserver (refused)"),
        (ConnectionResetError("reset"), "cannot reach the apiserver (reset)"),
        (TimeoutError(), "cannot reach the apiserver (TimeoutError)"),
        (FileNotFoundError(2, "No such file or directory", "job.yaml"), "No such file or directory: 'job.yaml'"),
    ],
)
def test_a_dropped_connection_and_a_missing_file_are_one_line_exit_1(
    exc: Exception, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The connection errors are bridge.k8s.client's (aiohttp lives there); a file error is not one.
    assert cli._answer(exc, "vbridge", argparse.Namespace()) == 1
    err = capsys.readouterr().err
    assert err.startswith("vbridge: error: ") and line in err and err.count("\n") == 1
    assert ("cannot reach" in err) is not isinstance(exc, FileNotFoundError)
