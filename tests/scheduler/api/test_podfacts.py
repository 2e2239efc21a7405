"""``podfacts.Memo``: a build that reuses what the last one derived plans exactly as a fresh build.

Each seeded mixed workload is built with a memo, then changed as a watch changes it (pods
replaced by changed copies: bound, finished, deleting, relabelled; pods gone; new pods; nodes
cordoned; now and then the priority classes), and built again with the same memo: tasks and plans equal those of a
fresh build of the same objects under every conf, and the pods that did not change were not
derived again.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Any

import pytest

from scheduler import configure, cycle
from scheduler.api import building, podfacts, snapshot
from tests.builders import scheduler as b
from tests.support import scenarios


def _changed(data: dict[str, Any], r: random.Random) -> tuple[dict[str, Any], set[str]]:
    """The workload after some watch events; the keys of the pods replaced or added."""
    pods, touched = [], set()
    nodes = [n["metadata"]["name"] for n in data["nodes"]]
    for pod in data["pods"]:
        roll = r.random()
        if roll < 0.05:
            continue  # deleted
        if roll < 0.25:
            pod = copy.deepcopy(pod)
            change = r.choice(["bind", "finish", "delete", "label"])
            if change == "bind" and not pod["spec"].get("nodeName"):
                pod["spec"]["nodeName"] = r.choice(nodes)
            elif change == "finish":
                pod["status"]["phase"] = "Succeeded"
            elif change == "delete":
                pod["metadata"]["deletionTimestamp"] = "2025-01-01T00:59:00Z"
            else:
                pod["metadata"]["labels"] = {**pod["metadata"]["labels"], "extra": "x"}
            touched.add(f"ns/{pod['metadata']['name']}")
        pods.append(pod)
    for i in range(r.randint(0, 3)):
        extra = copy.deepcopy(r.choice(data["pods"]))
        extra["metadata"]["name"] += f"-new{i}"
        pods.append(extra)
        touched.add(f"ns/{extra['metadata']['name']}")
    nodes_now = [copy.deepcopy(n) if r.random() < 0.2 else n for n in data["nodes"]]
    for node in (n for n, old in zip(nodes_now, data["nodes"], strict=True) if n is not old):
        node["spec"]["unschedulable"] = True  # cordoned: a new node object
    out = {**data, "pods": pods, "nodes": nodes_now}
    if r.random() < 0.1:
        out["priorityclasses"] = [b.priority_class("hi", 50), b.priority_class("lo", 60)]
    return out, touched


def _tasks(snap: snapshot.Snapshot) -> dict[str, snapshot.Task]:
    """Tasks with their shape numbers replaced by the first task key of that shape."""
    first: dict[int, str] = {}
    for key, task in snap.tasks.items():
        first.setdefault(task.shape, key)
    return {k: dataclasses.replace(t, shape=hash(first[t.shape])) for k, t in snap.tasks.items()}


@pytest.mark.parametrize("chunk", range(4))
def test_a_memo_kept_across_builds_changes_no_task_and_no_plan(chunk: int) -> None:
    reused = 0
    for seed in range(chunk * 40, (chunk + 1) * 40):
        r = random.Random(seed)
        data = b.mixed_workload(seed)
        conf = configure.parse(b.CONFS[seed % len(b.CONFS)])
        memo = podfacts.Memo()
        first = building.build(**data, memo=memo)
        assert _tasks(first) == _tasks(building.build(**data))
        later, touched = _changed(data, r)
        again = building.build(**later, memo=memo)
        fresh = building.build(**later)
        assert _tasks(again) == _tasks(fresh)
        assert cycle.schedule(again, conf, scenarios.NOW) == cycle.schedule(fresh, conf, scenarios.NOW)
        if later["priorityclasses"] is data["priorityclasses"]:
            kept = [k for k in again.tasks if k in first.tasks and k not in touched]
            assert all(again.tasks[k] is first.tasks[k] for k in kept), "an unchanged pod was derived again"
            reused += len(kept)
    assert reused > 100  # the memo did spare work


def test_changed_priority_classes_start_the_memo_again() -> None:
    pod = b.pod("p", priority_class="hi")
    memo = podfacts.Memo()
    inputs = {"nodes": [b.node("n1")], "pods": [pod], "podgroups": [b.podgroup("pg")], "queues": [b.queue()]}
    low = building.build(**inputs, priorityclasses=[b.priority_class("hi", 1)], memo=memo)
    high = building.build(**inputs, priorityclasses=[b.priority_class("hi", 9)], memo=memo)
    assert (low.tasks["ns/p"].priority, high.tasks["ns/p"].priority) == (1, 9)


def test_pods_labelled_alike_share_one_labels_mapping() -> None:
    """A gang's pods (labelled alike) get one labels mapping, so comparing them is ``is``; pods
    labelled otherwise keep their own, equal to what their objects say."""
    pods = [b.pod(f"p{k}", labels={"app": "g", "tier": "x"}) for k in range(3)]
    pods.append(b.pod("q", labels={"app": "h"}))
    inputs = {"nodes": [b.node("n1")], "pods": pods, "podgroups": [b.podgroup("pg")], "queues": [b.queue()]}
    snap = building.build(**inputs)
    first, *rest = (snap.tasks[f"ns/p{k}"].labels for k in range(3))
    assert all(labels is first for labels in rest)
    assert first == {"app": "g", "tier": "x"} and snap.tasks["ns/q"].labels == {"app": "h"}
