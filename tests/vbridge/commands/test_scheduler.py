"""``vbridge scheduler``'s process settings (``tune_process``), in a process of their own."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from vbridge import cli
from vbridge.commands import scheduler as scheduler_command


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the allocator options are glibc's")
def test_tune_process_sets_the_collector_and_the_allocator() -> None:
    code = "import gc; from vbridge.commands import scheduler; print(scheduler.tune_process(), gc.get_threshold())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split(" ", 1) == ["True", f"{scheduler_command.GC_THRESHOLDS}\n"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--status-qps", "0"], "argument --status-qps: '0' must be more than 0"),
        (["--status-qps", "fast"], "argument --status-qps: 'fast' is not a number"),
        (["--status-burst", "0"], "argument --status-burst: 0 is too small: at least 1"),
    ],
)
def test_bad_status_rates_are_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["scheduler", *argv])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"vbridge scheduler: error: {message}"
