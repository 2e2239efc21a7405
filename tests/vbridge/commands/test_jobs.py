"""``vbridge job`` and ``vbridge queue``: what is refused before any request (no cluster needed)."""

from __future__ import annotations

import pathlib

import pytest

from vbridge import cli

UNREACHABLE = "--kubeconfig=/nonexistent/kubeconfig"  # any request would fail with exit 1, not 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--weight", "0"], "argument --weight: spec.weight must be an integer from 1 to 65535, got 0"),
        (["--weight", "65536"], "argument --weight: spec.weight must be an integer from 1 to 65535, got 65536"),
        (["--weight", "-3"], "argument --weight: spec.weight must be an integer from 1 to 65535, got -3"),
        (["--weight", "two"], "argument --weight: spec.weight must be an integer from 1 to 65535, got 'two'"),
    ],
)
def test_queue_create_refuses_what_the_server_would(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["queue", "create", "ml", *argv, UNREACHABLE])
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"vbridge queue create: error: {message}",
        "run 'vbridge queue create --help' for usage",
    ]


@pytest.mark.parametrize("name", ["ML", "ml-", "ml_team", "a" * 254, ""])
def test_queue_names_the_server_would_refuse(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["queue", "create", name, UNREACHABLE])
    assert done.value.code == 2
    assert "is not a valid queue name: lower-case letters, digits" in capsys.readouterr().err


def test_a_valid_queue_goes_on_to_the_cluster(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    assert cli.main(["queue", "create", "ml.team-a", "--weight", "65535", f"--kubeconfig={tmp_path / 'absent'}"]) == 1
    assert capsys.readouterr().err.startswith(f"vbridge: error: cannot read kubeconfig {tmp_path / 'absent'}")
