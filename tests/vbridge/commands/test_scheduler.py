"""``vbridge scheduler``'s process settings (``tune_process``), in a process of their own."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from vbridge.commands import scheduler


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the allocator options are glibc's")
def test_tune_process_sets_the_collector_and_the_allocator() -> None:
    code = "import gc; from vbridge.commands import scheduler; print(scheduler.tune_process(), gc.get_threshold())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split(" ", 1) == ["True", f"{scheduler.GC_THRESHOLDS}\n"]
