"""The accounting's message for a wait that timed out: it must name what is short and how it stands."""

from __future__ import annotations

from typing import Any

from tests.support import accounting


def pod(name: str, *, node: str | None = None, phase: str = "Pending", scheduled: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if scheduled:
        condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": scheduled}
        status["conditions"] = [condition]
    return {"metadata": {"name": name}, "spec": {"nodeName": node} if node else {}, "status": status}


def test_pod_state_says_where_a_pod_runs_or_why_it_waits() -> None:
    assert accounting.pod_state(pod("a", node="n1", phase="Succeeded")) == "a: Succeeded on n1"
    assert accounting.pod_state(pod("b", scheduled="0/4 nodes fit")) == "b: unbound (Unschedulable: 0/4 nodes fit)"
    gated = {**pod("c"), "spec": {"schedulingGates": [{"name": "g"}]}}
    assert accounting.pod_state(gated) == "c: unbound gated"


def test_short_names_each_unfinished_job_and_unbound_gang_with_its_pods() -> None:
    tally = accounting.Tally(
        jobs={"ns/j0": "Completed", "ns/j2": "Pending"},
        groups={"ns/g1": (2, 2, "Completed"), "ns/g3": (2, 0, "Inqueue")},
        members={"ns/j2": ["j2-work-0: unbound"], "ns/g3": ["g3-0: unbound", "g3-1: unbound"]},
    )
    told = accounting.short(tally, ["ns/j0", "ns/j2", "ns/j4"], ["ns/g1", "ns/g3", "ns/g5"])
    assert told == (
        "4 short: Volcano Job ns/j2: Pending (j2-work-0: unbound) | Volcano Job ns/j4: missing (no pods) | "
        "PodGroup ns/g3: 0/2 bound, phase Inqueue (g3-0: unbound; g3-1: unbound) | "
        "PodGroup ns/g5: PodGroup missing (no pods)"
    )


def test_short_caps_the_list_and_says_how_many_more() -> None:
    tally = accounting.Tally(groups={f"ns/g{i}": (2, 0, "") for i in range(5)})
    told = accounting.short(tally, groups=[f"ns/g{i}" for i in range(5)], most=2)
    assert told.startswith("5 short: PodGroup ns/g0: 0/2 bound, phase none (no pods) | PodGroup ns/g1")
    assert told.endswith("; and 3 more")
    assert accounting.short(tally) == "nothing short"
