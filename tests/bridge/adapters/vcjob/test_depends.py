"""Task dependencies: which tasks may have pods made, from the job and its observed pods, and the gang."""

from __future__ import annotations

from typing import Any

from bridge import queues
from bridge.adapters import base
from bridge.adapters.vcjob import adapter as vcjob_adapter
from bridge.adapters.vcjob import depends, lifecycle, podgroup, spec
from tests.builders import vcjob as jobs
from tests.builders.vcjob import pod

NOW = "2026-05-01T12:00:00Z"


def workers(job: dict[str, Any], n: int, phase: str = "Running", **kw: Any) -> list[dict[str, Any]]:
    return [pod(job, "mpiworker", i, phase, **kw) for i in range(n)]


def test_the_mpi_master_waits_until_every_worker_runs_ready() -> None:
    job = jobs.depends_mpi()
    assert depends.startable(job, []) == {"mpiworker"}
    assert depends.waiting_for(job, []) == {"mpimaster": ("mpiworker",)}
    # The worker task's minAvailable is its 10 replicas: 9 running are not enough.
    assert depends.startable(job, workers(job, 9)) == {"mpiworker"}
    not_ready = [*workers(job, 9), pod(job, "mpiworker", 9, ready=False)]
    assert depends.startable(job, not_ready) == {"mpiworker"}, "Running but a container not ready"
    pending = [*workers(job, 9), pod(job, "mpiworker", 9, "Pending")]
    assert depends.startable(job, pending) == {"mpiworker"}
    assert depends.startable(job, workers(job, 10, ready=True)) == {"mpiworker", "mpimaster"}
    assert depends.waiting_for(job, workers(job, 10)) == {}


def test_succeeded_pods_count_and_pods_being_deleted_do_not() -> None:
    job = jobs.depends_mpi()
    done = [*workers(job, 5), *(pod(job, "mpiworker", i, "Succeeded") for i in range(5, 10))]
    assert "mpimaster" in depends.startable(job, done)
    going = [*workers(job, 9), pod(job, "mpiworker", 9, deleting=True)]
    assert "mpimaster" not in depends.startable(job, going)
    other_job = {**job, "metadata": {**job["metadata"], "name": "other"}}
    assert "mpimaster" not in depends.startable(job, workers(other_job, 10)), "only the task's own pod names count"


def test_task_min_available_is_what_a_dependency_needs() -> None:
    job = jobs.depends_mpi()
    job["spec"]["tasks"][1]["minAvailable"] = 4
    assert depends.startable(job, workers(job, 3)) == {"mpiworker"}
    assert depends.startable(job, workers(job, 4)) == {"mpiworker", "mpimaster"}


def test_iteration_any_needs_one_of_its_tasks_and_all_needs_every_one() -> None:
    job = jobs.seed("volcano/depends-on-chain.yaml")
    nginx1, nginx2, nginx3 = job["spec"]["tasks"]
    assert depends.startable(job, []) == {"job-nginx1"}
    first = [pod(job, "job-nginx1", 0)]
    assert depends.startable(job, first) == {"job-nginx1", "job-nginx2"}, "a chain starts one link at a time"
    second = [*first, *(pod(job, "job-nginx2", i) for i in range(5))]
    assert depends.startable(job, second) == {"job-nginx1", "job-nginx2", "job-nginx3"}

    nginx3["dependsOn"] = {"name": ["job-nginx1", "job-nginx2"], "iteration": "any"}
    assert "job-nginx3" in depends.startable(job, first), "any: job-nginx1 alone is enough"
    nginx3["dependsOn"]["iteration"] = "all"
    assert "job-nginx3" not in depends.startable(job, first)
    assert depends.waiting_for(job, first) == {"job-nginx3": ("job-nginx2",)}
    nginx3["dependsOn"] = {"name": ["job-nginx2"], "iteration": "any"}
    assert "job-nginx3" not in depends.startable(job, first), "any with a single name is all of it"
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


def test_the_gang_is_volcanos_when_the_first_pods_can_form_it() -> None:
    job = jobs.depends_mpi()
    gang = depends.gang(job)
    # minAvailable 3 of 11: Volcano's scheduler checks only the job's count (3 < 1 + 10), which the
    # 10 workers alone can meet.
    assert (gang.min_member, dict(gang.min_task_member), gang.reduced) == (3, {}, False)
    group = podgroup.build(job, {})
    assert group["spec"]["minMember"] == 3 and "minTaskMember" not in group["spec"]
    chain = jobs.seed("volcano/depends-on-chain.yaml")
    assert (depends.gang(chain).min_member, depends.gang(chain).reduced) == (1, False)


def test_a_gang_that_counts_pods_not_made_yet_gangs_the_first_pods_instead() -> None:
    raw = jobs.depends_mpi()
    del raw["spec"]["minAvailable"]
    for task in raw["spec"]["tasks"]:
        del task["minAvailable"]
    job = spec.defaulted(raw)  # minAvailable = 1 + 10: the master's pod could never be in the first gang
    assert job["spec"]["minAvailable"] == 11
    gang = depends.gang(job)
    assert (gang.min_member, dict(gang.min_task_member), gang.first, gang.reduced) == (
        10,
        {"mpiworker": 10},
        ("mpiworker",),
        True,
    )
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "8"}}
    job["spec"]["tasks"][1]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    assert podgroup.min_resources(job, {}) == {"cpu": "10"}, "the master is not in the gang's reservation"
    ctx = base.Context(namespace="team-a", queues={"default": queues.QueueFacts()})
    admitted = vcjob_adapter.VolcanoJobAdapter().admit(raw, ctx)
    assert admitted is not None and admitted.warnings == (
        "minAvailable 11 counts pods of tasks that wait (dependsOn) for mpiworker, so the gang could never form: "
        "it gangs the 10 pods of mpiworker that start first (PodGroup minMember 10)",
    )
    # The job itself still runs only with all 11, as its minAvailable says.
    assert lifecycle.step(job, workers(job, 10), lifecycle.Request(), now=NOW).phase == "Pending"
    assert lifecycle.step(job, [*workers(job, 10), pod(job, "mpimaster", 0)], lifecycle.Request(), now=NOW).phase == (
        "Running"
    )


def test_without_dependencies_the_gang_is_untouched() -> None:
    job = jobs.mpi()
    gang = depends.gang(job)
    assert (gang.min_member, dict(gang.min_task_member), gang.reduced) == (3, {"mpimaster": 1, "mpiworker": 2}, False)
    assert depends.startable(job, []) == {"mpimaster", "mpiworker"}
