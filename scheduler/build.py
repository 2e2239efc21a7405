"""Which build of the core runs: compiled or interpreted.

The modules ``pyproject.toml`` lists under ``[tool.vbridge] compiled`` are C extensions built by
mypyc in the image's wheel (``setup.py``, ``VBRIDGE_COMPILE=1``) and plain Python anywhere else;
both builds make the same plans (``tools/dev test`` runs ``tests/scheduler`` on each). The
scheduler exports which one it runs as ``vbridge_scheduler_build_info{core=...}``.
"""

from __future__ import annotations

import importlib.machinery
import pathlib

from scheduler.framework import placement

__all__ = ["COMPILED", "INTERPRETED", "core"]

COMPILED = "compiled"
INTERPRETED = "interpreted"


def core() -> str:
    """COMPILED when the placement module, the first of the hot path, was loaded from a C extension."""
    path = pathlib.Path(placement.__file__ or "")
    return COMPILED if path.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) else INTERPRETED
