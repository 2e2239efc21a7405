"""Which missing pods a job gets now: its gang together, the rest in waves as pods get placed."""

from __future__ import annotations

from typing import Any

from bridge.adapters.vcjob import pods, spec
from bridge.vcjobcontrol import waves
from tests.builders import vcjob as jobs
from tests.builders.vcjob import pod


def wide(replicas: int, min_available: int, *, tasks: int = 1) -> dict[str, Any]:
    body = jobs.simple("wide", replicas)
    task = body["spec"]["tasks"][0]
    task["minAvailable"] = min_available
    body["spec"]["tasks"] = [{**task, "name": f"t{n}"} for n in range(tasks)]
    body["spec"]["minAvailable"] = min_available * tasks
    body["metadata"].update(namespace="team-a", uid="u-1")
    return spec.defaulted(body)


def missing(job: dict[str, Any], observed: list[dict[str, Any]]) -> list[tuple[str, int]]:
    there = {p["metadata"]["name"] for p in observed}
    return [(t, i) for t, i in pods.desired_names(job) if f"wide-{t}-{i}" not in there]


def test_a_huge_job_with_a_small_gang_starts_with_one_wave_not_every_pod() -> None:
    job = wide(10_000, 10)
    first = waves.release(job, [], missing(job, []), least=100, most=500)
    assert len(first) == 100 and first[:10] == tuple(("t0", i) for i in range(10)), "the gang first, in order"
    # Created but not yet seen by the watch: they count, nothing more is made.
    assert waves.release(job, [], missing(job, [])[100:], expected=100, least=100, most=500) == ()


def test_waves_grow_as_the_scheduler_places_pods_and_stop_at_most_pending() -> None:
    """A 440-slot cluster: each wave is as large as what is placed (at least 100), and once the
    cluster is full the job holds as many pending pods as it has placed, then no more."""
    job = wide(10_000, 10)
    made: list[dict[str, Any]] = []
    sizes = []
    for _ in range(8):
        wave = waves.release(job, made, missing(job, made), least=100, most=500)
        sizes.append(len(wave))
        for t, i in wave:  # the scheduler places what fits in the 440 slots
            fits = sum(1 for p in made if waves.placed(p)) < 440
            made.append(pod(job, t, i, "Running" if fits else "Pending", node="n" if fits else None))
    assert sizes == [100, 100, 200, 400, 80, 0, 0, 0], sizes
    assert sum(1 for p in made if not waves.placed(p)) == 440 and len(made) == 880


def test_at_most_wave_most_pods_are_pending_beyond_the_gang() -> None:
    job = wide(10_000, 10)
    placed = [pod(job, "t0", i, "Succeeded", node="n") for i in range(5_000)]
    assert len(waves.release(job, placed, missing(job, placed), least=100, most=500)) == 500


def test_the_whole_gang_is_made_at_once_however_large() -> None:
    job = wide(10_000, 10_000)
    assert waves.gang(job) == frozenset(pods.desired_names(job))
    assert len(waves.release(job, [], missing(job, []), least=100, most=500)) == 10_000


def test_each_tasks_min_available_is_in_the_gang_then_the_jobs_min_available_in_spec_order() -> None:
    job = wide(50, 2, tasks=3)
    assert waves.gang(job) == {(f"t{n}", i) for n in range(3) for i in range(2)}
    job["spec"]["minAvailable"] = 8  # more than the tasks' minimums: the next pods in spec order
    assert waves.gang(job) - {(f"t{n}", i) for n in range(3) for i in range(2)} == {("t0", 2), ("t0", 3)}
    few = waves.release(job, [], missing(job, []), least=8, most=500)
    assert len(few) == 8 and set(few) == waves.gang(job)


def test_a_small_job_is_made_at_once_as_volcano_makes_it() -> None:
    job = wide(60, 2)
    assert len(waves.release(job, [], missing(job, []), least=100, most=500)) == 60


def test_pods_being_deleted_and_finished_ones_do_not_hold_a_wave_back() -> None:
    job = wide(1_000, 1)
    going = [pod(job, "t0", i, "Pending", deleting=True) for i in range(100)]
    done = [pod(job, "t0", i, "Succeeded") for i in range(100, 300)]
    observed = going + done
    wave = waves.release(job, observed, missing(job, observed), least=100, most=500)
    assert len(wave) == 200, "200 placed (finished) pods: a wave of 200; terminating pods count for nothing"
