"""``vbridge up``'s options are checked before anything starts: one usage line, exit 2, no control plane."""

from __future__ import annotations

import logging
import pathlib

import pytest

from vbridge import cli
from vbridge.commands import up


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--node-cpu", "abc"], "argument --node-cpu: 'abc' is not a quantity; e.g. 16, 500m, 64Gi"),
        (["--node-cpu", "0"], "argument --node-cpu: '0' must be more than 0"),
        (["--node-memory", "lots"], "argument --node-memory: 'lots' is not a quantity; e.g. 16, 500m, 64Gi"),
        (["--nodes", "0"], "argument --nodes: 0 is too small: at least 1"),
        (["--nodes", "four"], "argument --nodes: 'four' is not a whole number"),
        (["--node-gpus", "-1"], "argument --node-gpus: -1 is too small: at least 0"),
        (["--run-seconds", "-5"], "argument --run-seconds: '-5' must be more than 0 seconds"),
        (["--port", "70000"], "argument --port: 70000 is not a TCP port (1 to 65535)"),
    ],
)
def test_bad_options_fail_before_start_up(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["up", *argv])
    assert done.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""  # nothing started: not even "preparing the control-plane binaries"
    assert err.splitlines() == [f"vbridge up: error: {message}", "run 'vbridge up --help' for usage"]


def test_good_options_are_kept_as_given() -> None:
    args = cli.parser("up").parse_args(["up", "--node-cpu", "500m", "--node-memory", "8Gi", "--nodes", "2", "-v"])
    assert (args.node_cpu, args.node_memory, args.nodes, args.verbose) == ("500m", "8Gi", 2, True)


def test_the_bridge_logs_go_to_the_logs_folder(tmp_path: pathlib.Path) -> None:
    handler = up._logging(tmp_path / "logs", verbose=False)
    try:
        logging.getLogger("scheduler.io.loop").info("cycle 1: 3 binds")
        logging.getLogger("webhooks.server").debug("not at info level")
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    lines = (tmp_path / "logs" / up.LOG_FILE).read_text().splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == ["INFO scheduler.io.loop: cycle 1: 3 binds"]
