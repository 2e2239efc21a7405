"""``vbridge translate`` on hostile inputs, as a user runs it (a process of its own): each is one
line of error and exit 1, within 5 s and 200 MB.

The finding: a 730-byte YAML alias bomb took 2.8 GB and ended in a traceback or a segfault,
``-f /dev/zero`` took 5.4 GB, and a 50 MB file printed nothing in 120 s. The child's peak
resident memory is ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` in a small parent of its own
(``_MEASURED``), which runs nothing else.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time
from typing import IO

ROOT = pathlib.Path(__file__).resolve().parents[3]
BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)
SECONDS, MAX_RSS = 5.0, 200 * 2**20
# Runs the command as its only child and writes "EXIT MAXRSS_KIB": a child's peak RSS starts at
# its parent's (Linux keeps the high-water mark across fork and exec), so the parent is a small
# process of its own, not the test process.
_MEASURED = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write(f'{code} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}')\n"
)


def _translate(tmp_path: pathlib.Path, *argv: str, stdin: IO[bytes] | None = None) -> tuple[int, str, float, int, str]:
    """(exit code, stderr, seconds, peak RSS in bytes, stdout) of ``vbridge translate ARGV``."""
    out, err, usage = tmp_path / "stdout", tmp_path / "stderr", tmp_path / "usage"
    command = [sys.executable, "-m", "vbridge.cli", "translate", *argv]
    with out.open("wb") as out_file, err.open("wb") as err_file:
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-c", _MEASURED, str(usage), *command],
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=out_file,
            stderr=err_file,
            cwd=ROOT,
        )
        try:
            proc.wait(SECONDS * 6)  # a hang fails on the time below
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        seconds = time.monotonic() - started
    code, rss = (int(v) for v in usage.read_text().split())
    return code, err.read_text(), seconds, rss * 1024, out.read_text()


def _one_line_error(result: tuple[int, str, float, int, str], line: str, *, printed: str = "") -> None:
    code, err, seconds, rss, out = result
    print(f"\n{line!r}: exit {code}, {seconds:.2f} s, peak RSS {rss / 2**20:.0f} MiB")
    assert (code, err, out) == (1, line + "\n", printed)
    assert seconds < SECONDS and rss < MAX_RSS


def test_a_yaml_alias_bomb(tmp_path: pathlib.Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    assert bomb.stat().st_size < 730
    expected = f"{bomb}:1:1: error: document contains excessive aliasing (490329064 nodes once expanded, 28 written)"
    _one_line_error(_translate(tmp_path, "-f", str(bomb)), expected)


def test_dev_zero_as_a_file_and_as_stdin(tmp_path: pathlib.Path) -> None:
    expected = (
        "/dev/zero: error: not a regular file (a character device); to read a stream, give - and send it on stdin"
    )
    _one_line_error(_translate(tmp_path, "-f", "/dev/zero"), expected)
    with open("/dev/zero", "rb") as zero:
        expected = (
            "<stdin>: error: too large: over the 3 MiB one input may have (the apiserver's cap on a request body)"
        )
        _one_line_error(_translate(tmp_path, "-f", "-", stdin=zero), expected)


def test_a_fifo_nobody_writes_to(tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "jobs.yaml"
    os.mkfifo(fifo)
    expected = f"{fifo}: error: not a regular file (a FIFO); to read a stream, give - and send it on stdin"
    _one_line_error(_translate(tmp_path, "-f", str(fifo)), expected)


def test_a_50_mb_file_and_the_next_input_is_still_translated(tmp_path: pathlib.Path) -> None:
    big = tmp_path / "big.yaml"
    line = b"- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {k: v}}\n"
    big.write_bytes(line * (50 * 10**6 // len(line) + 1))
    size = big.stat().st_size
    cap = "over the 3 MiB one input may have (the apiserver's cap on a request body)"
    expected = f"{big}: error: too large: {size} bytes, {cap}"
    good = ROOT / "examples" / "tfjob-v1.yaml"
    printed = "# " + str(good) + ": converted from"  # the example is today's API: printed unchanged
    result = _translate(tmp_path, "-f", str(big), "-f", str(good), "--converted-only")
    _one_line_error(result, expected, printed=result[4])
    assert result[4].startswith("apiVersion: kubeflow.org/v1\nkind: TFJob\n") and printed not in result[4]
