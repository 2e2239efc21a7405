"""The gang check the operator tests rely on: it must catch a gang split across cycles."""

from __future__ import annotations

from scheduler.io import binder, loop
from tests.support import gangcheck


def report(
    cycle: int, groups: dict[str, str], *, unrecorded: tuple[str, ...] = (), failed: tuple[tuple[str, str], ...] = ()
) -> loop.CycleReport:
    bound = (*(pod for pod in groups if pod not in dict(failed)), *unrecorded)
    return loop.CycleReport(0.0, 0.0, 0.0, binder.Outcome(bound=bound, failed=failed), 0, cycle, groups)


def test_log_keeps_each_pods_first_bind_and_its_group() -> None:
    log = gangcheck.BindLog()
    log.record(report(3, {"ns/a": "ns/g"}, unrecorded=("ns/loose",)))
    log.record(report(7, {"ns/a": "ns/g"}))  # a re-created pod of the same name
    assert log.binds() == {"ns/a": gangcheck.Bind(3, "ns/g"), "ns/loose": gangcheck.Bind(3, None)}


def test_log_keeps_failed_binds_with_their_group() -> None:
    log = gangcheck.BindLog()
    log.record(report(2, {"ns/a": "ns/g", "ns/b": "ns/g"}, failed=(("ns/b", "pod has scheduling gates"),)))
    assert log.binds() == {"ns/a": gangcheck.Bind(2, "ns/g")}
    assert log.failed() == ["ns/b (ns/g) in cycle 2: pod has scheduling gates"]


def test_gang_in_one_cycle_passes_and_later_members_do_not_matter() -> None:
    log = gangcheck.BindLog()
    log.record(report(4, {"ns/w-0": "ns/job", "ns/w-1": "ns/job", "ns/driver": "ns/spark"}))
    log.record(report(5, {"ns/exec-1": "ns/spark"}))
    log.record(report(9, {"ns/exec-2": "ns/spark"}))
    assert gangcheck.split_gangs(log.binds(), {"ns/job": 2, "ns/spark": 1}) == []


def test_gang_split_across_cycles_is_reported_with_its_cycles() -> None:
    log = gangcheck.BindLog()
    log.record(report(4, {"ns/w-0": "ns/job", "ns/w-1": "ns/job"}))
    log.record(report(6, {"ns/launcher": "ns/job"}))
    [problem] = gangcheck.split_gangs(log.binds(), {"ns/job": 3})
    assert "PodGroup ns/job (minMember 3) was not bound as one gang" in problem
    assert "cycles [4, 6]" in problem and "ns/launcher in cycle 6" in problem


def test_gang_with_fewer_binds_than_min_member_is_reported() -> None:
    binds = {"ns/w-0": gangcheck.Bind(2, "ns/job")}
    assert gangcheck.split_gangs(binds, {"ns/job": 2, "ns/other": 1}) == [
        "PodGroup ns/job (minMember 2): only 1 binds recorded (ns/w-0 in cycle 2)",
        "PodGroup ns/other (minMember 1): only 0 binds recorded (none)",
    ]
