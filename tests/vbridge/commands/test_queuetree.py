"""``vbridge queue list``'s tree: levels, what each holds (its leaves' status.allocated), what it deserves."""

from __future__ import annotations

from tests.builders import scheduler as b
from vbridge.commands import queuetree as queue_table

NODES = [b.node("n0", cpu="10", memory="8Gi"), b.node("n1", cpu="10", memory="8Gi")]


def row(text: str, name: str) -> list[str]:
    """The cells of queue ``name``'s line, without the "- " that marks a level below root."""
    for line in text.splitlines():
        cells = line.split()
        if cells[0] == "-":
            cells = cells[1:]
        if cells[0] == name:
            return cells
    raise AssertionError(f"no line for {name} in:\n{text}")


def test_a_spec_parent_tree_sums_its_leaves_and_shows_each_level() -> None:
    queues = b.org_tree()
    assert queue_table.is_tree(queues)
    text = queue_table.render(queues, NODES)
    assert row(text, "org")[2:] == ["cpu", "8", "cpu", "8", "cpu", "12"]  # 5 + 3 held; deserved; capability
    assert row(text, "pa")[2:] == ["cpu", "5", "cpu", "6", "cpu", "12"]
    assert "    - pa" in text and row(text, "root")[-1] == "unlimited"
    assert "not in the tree: lost: its parent queue 'nowhere' does not exist" in text


def test_the_annotation_form_names_its_levels_and_gives_them_their_weighted_share() -> None:
    queues = [
        b.held(
            b.queue(
                "eng-prod", annotations={"volcano.sh/hierarchy": "eng/prod", "volcano.sh/hierarchy-weights": "1/3"}
            ),
            "2",
        ),
        b.queue("eng-dev", annotations={"volcano.sh/hierarchy": "eng/dev", "volcano.sh/hierarchy-weights": "1/1"}),
    ]
    text = queue_table.render(queues, NODES)
    assert row(text, "eng")[1:5] == ["cpu", "2", "cpu", "20,"]  # all of the cluster's 20 cpu: eng is alone
    assert row(text, "eng-prod")[2:8] == ["cpu", "2", "cpu", "15,", "memory", "12Gi"]  # 3 of 4 of eng's
    assert not queue_table.is_tree([b.queue("default")])


def test_each_level_is_followed_by_its_own_children() -> None:
    queues = [
        b.queue(n, annotations={"volcano.sh/hierarchy": p}) for n, p in (("a1", "a/x"), ("b1", "b/y"), ("a2", "a/z"))
    ]
    names = [
        line.split()[0] if line.split()[0] != "-" else line.split()[1]
        for line in queue_table.render(queues, NODES).splitlines()[1:]
    ]
    assert names == ["root", "a", "a1", "a2", "b", "b1"]
