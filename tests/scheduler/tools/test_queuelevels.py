"""The queue tree's levels for ``vbridge queue list``: depth first, held from the leaves, capacity's figures."""

from __future__ import annotations

from scheduler.api import resources
from scheduler.tools import queuelevels
from tests.builders import scheduler as b

NODES = [b.node("n0", cpu="10", memory="8Gi"), b.node("n1", cpu="10", memory="8Gi")]


def test_levels_follow_the_tree_and_sum_their_leaves() -> None:
    queues = b.org_tree()
    table = queuelevels.of(queues, NODES)
    by = {level.label: level for level in table.levels}
    assert [(level.label, level.depth) for level in table.levels] == [("root", 0), ("org", 1), ("pa", 2), ("pb", 2)]
    assert by["org"].allocated == resources.parse({"cpu": "8"})  # 5 + 3 from its leaves
    assert by["pa"].deserved == resources.parse({"cpu": "6"})
    assert by["pa"].capability == resources.parse({"cpu": "12"})  # its parent's bound
    assert by["root"].capability is None  # unlimited
    assert table.broken == {"lost": "its parent queue 'nowhere' does not exist"}
    assert queuelevels.is_tree(queues)


def test_annotation_levels_have_no_queue_object_and_a_flat_list_is_no_tree() -> None:
    queues = [b.queue("eng-prod", annotations={"volcano.sh/hierarchy": "eng/prod"})]
    by = {level.label: level for level in queuelevels.of(queues, NODES).levels}
    assert by["eng"].state == "" and by["eng-prod"].state != ""
    assert not queuelevels.is_tree([b.queue("default")])
