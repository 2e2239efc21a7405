"""Task dependencies at run time: which tasks may have pods made, from the job and its observed
pods, and the state machine making a dependent task's pods once its tasks run (again after a restart)."""

from __future__ import annotations

from bridge.vcjobcontrol import lifecycle, starting
from tests.builders import vcjob as jobs
from tests.builders.vcjob import pod, workers

NOW = "2026-05-01T12:00:00Z"


def test_the_mpi_master_waits_until_every_worker_runs_ready() -> None:
    job = jobs.depends_mpi()
    assert starting.startable(job, []) == {"mpiworker"}
    assert starting.waiting_for(job, []) == {"mpimaster": ("mpiworker",)}
    # The worker task's minAvailable is its 10 replicas: 9 running are not enough.
    assert starting.startable(job, workers(job, 9)) == {"mpiworker"}
    not_ready = [*workers(job, 9), pod(job, "mpiworker", 9, ready=False)]
    assert starting.startable(job, not_ready) == {"mpiworker"}, "Running but a container not ready"
    pending = [*workers(job, 9), pod(job, "mpiworker", 9, "Pending")]
    assert starting.startable(job, pending) == {"mpiworker"}
    assert starting.startable(job, workers(job, 10, ready=True)) == {"mpiworker", "mpimaster"}
    assert starting.waiting_for(job, workers(job, 10)) == {}


def test_succeeded_pods_count_and_pods_being_deleted_do_not() -> None:
    job = jobs.depends_mpi()
    done = [*workers(job, 5), *(pod(job, "mpiworker", i, "Succeeded") for i in range(5, 10))]
    assert "mpimaster" in starting.startable(job, done)
    going = [*workers(job, 9), pod(job, "mpiworker", 9, deleting=True)]
    assert "mpimaster" not in starting.startable(job, going)
    other_job = {**job, "metadata": {**job["metadata"], "name": "other"}}
    assert "mpimaster" not in starting.startable(job, workers(other_job, 10)), "only the task's own pod names count"


def test_task_min_available_is_what_a_dependency_needs() -> None:
    job = jobs.depends_mpi()
    job["spec"]["tasks"][1]["minAvailable"] = 4
    assert starting.startable(job, workers(job, 3)) == {"mpiworker"}
    assert starting.startable(job, workers(job, 4)) == {"mpiworker", "mpimaster"}


def test_iteration_any_needs_one_of_its_tasks_and_all_needs_every_one() -> None:
    job = jobs.seed("volcano/depends-on-chain.yaml")
    nginx1, nginx2, nginx3 = job["spec"]["tasks"]
    assert starting.startable(job, []) == {"job-nginx1"}
    first = [pod(job, "job-nginx1", 0)]
    assert starting.startable(job, first) == {"job-nginx1", "job-nginx2"}, "a chain starts one link at a time"
    second = [*first, *(pod(job, "job-nginx2", i) for i in range(5))]
    assert starting.startable(job, second) == {"job-nginx1", "job-nginx2", "job-nginx3"}

    nginx3["dependsOn"] = {"name": ["job-nginx1", "job-nginx2"], "iteration": "any"}
    assert "job-nginx3" in starting.startable(job, first), "any: job-nginx1 alone is enough"
    nginx3["dependsOn"]["iteration"] = "all"
    assert "job-nginx3" not in starting.startable(job, first)
    assert starting.waiting_for(job, first) == {"job-nginx3": ("job-nginx2",)}
    nginx3["dependsOn"] = {"name": ["job-nginx2"], "iteration": "any"}
    assert "job-nginx3" not in starting.startable(job, first), "any with a single name is all of it"
    assert nginx1.get("dependsOn") is None and nginx2["dependsOn"] == {"name": ["job-nginx1"]}


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
