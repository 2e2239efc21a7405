"""Run one bench of ``bench/`` as a child process at its smallest size, for the CI smoke.

Contract: ``run`` starts ``<interpreter> bench/<script> <flags>`` from the repository root,
waits for it (up to ``timeout`` seconds), and returns its combined output; a non-zero exit is
an assertion error that shows the output's tail. No timing is read or checked: the smoke only
proves a bench still runs and still prints its figures and ratios.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(script: str, flags: list[str], timeout: float) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *flags],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    tail = "\n".join(done.stdout.splitlines()[-40:])
    assert done.returncode == 0, f"bench/{script} {' '.join(flags)} exited {done.returncode}:\n{tail}"
    return done.stdout


def assert_prints(output: str, *patterns: str) -> None:
    """Every pattern (a regular expression) matches some line of the output."""
    missing = [p for p in patterns if not re.search(p, output, re.MULTILINE)]
    tail = "\n".join(output.splitlines()[-40:])
    assert not missing, f"no line matches {missing} in:\n{tail}"
