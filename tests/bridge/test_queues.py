"""Queue rules at admission: only leaf queues take jobs, and denials offer only leaves."""

from __future__ import annotations

from typing import Any

import pytest

from bridge import errors, queues
from tests.builders import scheduler as b


def facts(*objs: dict[str, Any]) -> dict[str, queues.QueueFacts]:
    return {o["metadata"]["name"]: queues.QueueFacts.from_api(o) for o in objs}


TREE = facts(b.queue("root"), b.queue("org"), b.queue("team", parent="org"), b.queue("pa", parent="team"))


def test_a_queue_that_parents_others_is_denied_with_its_children_and_the_leaves() -> None:
    with pytest.raises(errors.QueueError) as exc:
        queues.check("team", namespace="ns", queues=TREE)
    message = str(exc.value)
    assert "queue 'team' is not a leaf queue (it parents pa): only leaf queues take jobs" in message
    assert message.endswith("queues open to namespace 'ns': pa")


def test_a_leaf_is_admitted_and_the_annotation_form_makes_no_queue_a_parent() -> None:
    queues.check("pa", namespace="ns", queues=TREE)
    annotated = facts(b.queue("eng-prod", annotations={"volcano.sh/hierarchy": "root/eng/prod"}), b.queue("eng"))
    queues.check("eng", namespace="ns", queues=annotated)  # "eng" on the path is a level, not this Queue
