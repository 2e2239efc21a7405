"""Golden files: a command's exact output, kept beside its tests and compared byte for byte.

``check(folder, name, text)`` fails when ``folder/name`` differs from ``text``; with
``VBRIDGE_UPDATE_GOLDEN=1`` it rewrites the file instead (then review the diff).
"""

from __future__ import annotations

import os
import pathlib

__all__ = ["check"]


def check(folder: pathlib.Path, name: str, text: str) -> None:
    path = folder / name
    if os.environ.get("VBRIDGE_UPDATE_GOLDEN") == "1":
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} is missing; VBRIDGE_UPDATE_GOLDEN=1 writes it"
    assert text == path.read_text(), f"{path} differs; VBRIDGE_UPDATE_GOLDEN=1 rewrites it"
