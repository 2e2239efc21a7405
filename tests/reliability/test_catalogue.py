"""The checklist table cannot rot: every item has one row, and every test a row names exists."""

from __future__ import annotations

import ast
import pathlib

import pytest

from tests.reliability import catalogue

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_checklist_item_has_exactly_one_row() -> None:
    ids = [item.id for item in catalogue.ITEMS]
    reliability = [i for i in ids if i.startswith("R")]
    assert len(reliability) >= 25 and len(ids) - len(reliability) >= 13, "the checklists' items all have rows"
    assert ids == [f"R{i}" for i in range(1, len(reliability) + 1)] + [
        f"S{i}" for i in range(1, len(ids) - len(reliability) + 1)
    ]


def test_a_row_names_tests_or_says_why_not() -> None:
    for item in catalogue.ITEMS:
        assert item.tests or item.not_here or item.missing, item.id


@pytest.mark.parametrize("nodeid", sorted(catalogue.by_test()))
def test_every_named_test_exists(nodeid: str) -> None:
    path, _, name = nodeid.partition("::")
    tree = ast.parse((ROOT / path).read_text())
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert name in defined, f"{nodeid}: no such test"
