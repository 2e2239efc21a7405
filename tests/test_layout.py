"""The code rules a reader relies on, checked over the whole tree."""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("vbridge", "bridge", "webhooks", "scheduler", "tests", "bench", "tools")
MAX_LINES = 400


def test_no_module_is_over_400_lines() -> None:
    sizes = {
        path.relative_to(ROOT): len(path.read_text(encoding="utf-8").splitlines())
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert len(sizes) > 100  # the walk found the tree
    offenders = {str(path): lines for path, lines in sizes.items() if lines > MAX_LINES}
    if offenders:
        print("\n".join(f"{path}: {lines} lines" for path, lines in sorted(offenders.items())))
    assert not offenders, f"over {MAX_LINES} lines (split by concern): {offenders}"
