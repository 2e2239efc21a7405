"""build: the modules pyproject.toml lists as compiled are the ones the core runs compiled, or none.

``tools/dev test`` runs ``tests/scheduler`` twice: on the source (``VBRIDGE_CORE`` unset) and on
the tree ``tools/compile-core.sh`` builds (``VBRIDGE_CORE=compiled``), so each pass checks it
runs the build it means to.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import pathlib
import subprocess
import sys
import tomllib

from scheduler import build

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _listed() -> list[str]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        paths: list[str] = tomllib.load(f)["tool"]["vbridge"]["compiled"]
    return paths


def test_the_listed_modules_exist_and_are_the_scheduler_cores() -> None:
    paths = _listed()
    assert paths == sorted(paths) and len(set(paths)) == len(paths)
    for path in paths:
        assert (ROOT / path).is_file(), path
        assert path.startswith(("scheduler/actions/", "scheduler/framework/", "scheduler/plugins/")), path
    assert "scheduler/framework/placement.py" in paths  # what build.core() looks at


def test_the_core_runs_the_build_this_pass_means() -> None:
    expected = os.environ.get("VBRIDGE_CORE", build.INTERPRETED)
    assert build.core() == expected
    for path in _listed():
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        name = pathlib.Path(module.__file__ or "").name
        compiled = name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
        assert compiled == (expected == build.COMPILED), (path, name)


def test_asking_which_build_loads_no_core() -> None:
    # The metrics module imports it at start-up, before the core (and numpy) is loaded.
    probe = "import sys; from scheduler.io import metrics; metrics.build.core(); print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
