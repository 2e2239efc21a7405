"""Every item of the reliability checklist (R1–R25, and R26 on from our own issues) and of the
security checklist (S1–S13, and S14 on), one row each.

A row names the tests that show it: this suite's own (``tests/reliability/``) or tests elsewhere
that already cover the item. The table printed at the end of a session (``conftest.py``) takes
each row's outcome from those tests' reports in the same session. A row no test can show here
says why in ``not_here``; one this suite does not cover yet says what is missing (TODO).
``tests/reliability/test_catalogue.py`` checks that every named test exists and that every item
has a row.
"""

from __future__ import annotations

from tests.reliability import checklist, reliability_items, security_items

__all__ = ["ITEMS", "Item", "by_test"]

Item = checklist.Item
ITEMS: tuple[checklist.Item, ...] = reliability_items.ITEMS + security_items.ITEMS


def by_test() -> dict[str, list[str]]:
    """Node id -> the ids of the items it shows."""
    out: dict[str, list[str]] = {}
    for item in ITEMS:
        for test in item.tests:
            out.setdefault(test, []).append(item.id)
    return out
