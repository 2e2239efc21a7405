"""Task dependencies in the PodGroup: the gang that can form first, and what admission says of it."""

from __future__ import annotations

from bridge import queues
from bridge.adapters import base
from bridge.adapters.vcjob import adapter as vcjob_adapter
from bridge.adapters.vcjob import depends, podgroup, spec
from bridge.vcjobcontrol import lifecycle, starting
from tests.builders import vcjob as jobs
from tests.builders.vcjob import pod, workers

NOW = "2026-05-01T12:00:00Z"


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
    assert starting.startable(job, []) == {"mpimaster", "mpiworker"}
