"""Every scheduler package has a docstring stating its contract and an accurate ``__all__``."""

from __future__ import annotations

import importlib
import pathlib

import pytest

import scheduler

ROOT = pathlib.Path(scheduler.__file__).parent
PACKAGES = [
    "scheduler",
    "scheduler.api",
    "scheduler.framework",
    "scheduler.actions",
    "scheduler.plugins",
    "scheduler.tools",
    "scheduler.io",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_package_lists_its_modules(name: str) -> None:
    package = importlib.import_module(name)
    folder = pathlib.Path(package.__file__ or "").parent
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
    assert package.__doc__ and len(package.__doc__) > 80
    assert sorted(package.__all__) == sorted(modules)


def test_modules_stay_small() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in ROOT.rglob("*.py")}
    assert max(sizes.values()) <= 400, sizes
