"""Which build of the core runs: compiled or interpreted.

The modules ``pyproject.toml`` lists under ``[tool.vbridge] compiled`` are C extensions built by
mypyc in the image's wheel (``setup.py``, ``VBRIDGE_COMPILE=1``) and plain Python anywhere else;
both builds make the same plans (``tools/dev test`` runs ``tests/scheduler`` on each). The
scheduler exports which one it runs as ``vbridge_scheduler_build_info{core=...}``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util

__all__ = ["COMPILED", "INTERPRETED", "core"]

COMPILED = "compiled"
INTERPRETED = "interpreted"


def core() -> str:
    """COMPILED when the placement module, the first of the hot path, comes from a C extension.

    Its spec is what import loads (or loaded), found without importing it: the metrics server
    asks this and must not load the core (numpy) at start-up.
    """
    spec = importlib.util.find_spec("scheduler.framework.placement")
    origin = spec.origin if spec is not None and spec.origin else ""
    return COMPILED if origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) else INTERPRETED
