"""The state machine with task dependencies: a dependent task's pods follow the tasks it waits for
(``bridge.adapters.vcjob.depends.startable``, read by ``lifecycle.step``), and again after a restart."""

from __future__ import annotations

from bridge.vcjobcontrol import lifecycle
from tests.builders import vcjob as jobs
from tests.builders.vcjob import pod, workers

NOW = "2026-05-01T12:00:00Z"


def test_a_dependent_tasks_pods_are_created_by_the_sync_after_its_tasks_run() -> None:
    job = jobs.depends_mpi()
    plan = lifecycle.step(job, [], lifecycle.Request(), now=NOW)
    assert plan.create == tuple(("mpiworker", i) for i in range(10)) and plan.phase == "Pending"
    job["status"] = plan.status
    three = lifecycle.step(job, workers(job, 3) + workers(job, 10, "Pending")[3:], lifecycle.Request(), now=NOW)
    assert three.create == () and three.phase == "Running", "minAvailable 3 running: the job runs, the master waits"
    job["status"] = three.status
    all_ten = lifecycle.step(job, workers(job, 10), lifecycle.Request(), now=NOW)
    assert all_ten.create == (("mpimaster", 0),)


def test_a_restart_starts_the_workers_first_again() -> None:
    job = jobs.depends_mpi(state={"phase": "Running"})
    running = [pod(job, "mpimaster", 0), *workers(job, 10)]
    evicted = lifecycle.Request(event="PodEvicted", task="mpiworker", pod="lm-mpi-job-mpiworker-0", version=0)
    job["spec"]["policies"] = [{"event": "PodEvicted", "action": "RestartJob"}]
    plan = lifecycle.step(job, running, evicted, now=NOW)
    assert plan.phase == "Restarting" and len(plan.delete) == 11
    job["status"] = {**plan.status, "state": {"phase": "Pending"}}
    again = lifecycle.step(job, [], lifecycle.Request(), now=NOW)
    assert {t for t, _ in again.create} == {"mpiworker"}
