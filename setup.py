"""Build hook, only for the optional compiled core; everything else is in pyproject.toml.

With ``VBRIDGE_COMPILE=1`` the modules listed under ``[tool.vbridge] compiled`` are compiled by
mypyc into C extensions next to their sources (the wheel keeps both; Python loads the extension).
That needs mypy and a C compiler in the build environment, so such a build runs without build
isolation: ``pip install mypy setuptools && VBRIDGE_COMPILE=1 pip wheel --no-build-isolation .``
(the Dockerfile and ``tools/compile-core.sh`` do). Any other build is pure Python.
"""

from __future__ import annotations

import os
import tomllib

from setuptools import setup


def _ext_modules() -> list[object]:
    if os.environ.get("VBRIDGE_COMPILE") != "1":
        return []
    from mypyc.build import mypycify  # only here: a plain build needs no mypy

    with open("pyproject.toml", "rb") as f:
        modules: list[str] = tomllib.load(f)["tool"]["vbridge"]["compiled"]
    return list(mypycify(modules, opt_level="3"))


setup(ext_modules=_ext_modules())
