"""The stages annotation: written once, read back, anything else read as no stages."""

from __future__ import annotations

import pytest

from bridge import staging


def test_stages_are_read_back_as_written_tasks_sorted() -> None:
    raw = staging.encode([({"node": 3, "aux": 1}, ""), ({"launcher": 1}, "node Ready")])
    assert staging.decode(raw) == (
        staging.Stage(tasks=(("aux", 1), ("node", 3))),
        staging.Stage(tasks=(("launcher", 1),), after="node Ready"),
    )
    assert [s.pods for s in staging.decode(raw)] == [4, 1]


@pytest.mark.parametrize(
    "raw",
    [
        None,
        7,
        "not json",
        "{}",
        "[3]",
        '[{"tasks": 3}]',
        '[{"tasks": {}}]',
        '[{"tasks": {"a": "x"}}]',
        '[{"tasks": {"a": -1}}]',
        '[{"tasks": {"a": true}}]',
        '[{"tasks": {"a": 1.5}}]',
        '[{"after": ""}]',
    ],
)
def test_what_cannot_be_read_is_no_stages(raw: object) -> None:
    assert staging.decode(raw) == ()
