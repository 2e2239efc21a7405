"""Volcano Job ``batch.volcano.sh/v1alpha1``: Volcano's jobs-mutate and jobs-validate in one step.

Defaults and validation live in ``bridge.adapters.vcjob.spec``; here the queue is resolved (the field,
then the job's or the namespace's ``scheduling.volcano.sh/queue-name``, then ``default``) and
checked against the cluster's queues. The PodGroup is ``<job>-<uid>``: ``podgroup`` returns it
once the job has a uid (never at admission). Volcano Jobs have their own controller
(``vbridge.controllers.vcjobs``: the group, the pods, the lifecycle), not the generic reconciler.
"""

from __future__ import annotations

from typing import Any

from bridge import errors
from bridge.adapters import base, shapes
from bridge.adapters.vcjob import depends, podgroup, spec

__all__ = ["VolcanoJobAdapter"]


class VolcanoJobAdapter:
    registration = base.Registration(
        name="batch.volcano.sh/job",
        group="batch.volcano.sh",
        versions=("v1alpha1",),
        kind="Job",
        plural="jobs",
        failure_policy="Fail",
        why="an unchecked Job could sit in a closed or missing queue forever; Volcano denies it too",
        operations=("CREATE", "UPDATE"),
        shape=shapes.VolcanoJob,
        workload=base.Workload(
            operator="Volcano Job controller (vbridge controllers)",
            creates="the Volcano Job controller (vbridge controllers) has not created them",
            aliases=("vcjob", "vcjobs", "job.batch.volcano.sh"),
            operator_table=False,
        ),
    )

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            raise errors.InvalidObjectError("Job has no metadata")
        desired = spec.defaulted(obj, scheduler_name=ctx.scheduler_name)
        warnings = spec.validate(desired)
        field = desired["spec"].get("queue")
        # The CRD defaults queue to "default"; like Volcano's podgroup mutation, that value yields
        # to a queue named on the job or its namespace, when the job is made. Afterwards (UPDATE)
        # the field is the queue: an annotation changed later moves nothing.
        yields = field == "default" and ctx.admitted_queue is None
        desired["spec"]["queue"] = ctx.queue(field=None if yields else field, annotations=meta.get("annotations"))
        gang = depends.gang(desired)
        if gang.reduced:
            warnings.append(
                f"minAvailable {desired['spec']['minAvailable']} counts pods of tasks that wait (dependsOn) for "
                f"{', '.join(gang.first)}, so the gang could never form: it gangs the {gang.min_member} pods of "
                f"{', '.join(gang.first)} that start first (PodGroup minMember {gang.min_member})"
            )
        return base.Admission(desired=desired, warnings=tuple(warnings))

    def queue_of(self, obj: dict[str, Any], ctx: base.Context) -> str | None:
        """The field: admission wrote the resolved queue there."""
        return str((obj.get("spec") or {}).get("queue") or "default")

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        """``<job>-<uid>`` as the controller makes it; None before the job exists (no uid)."""
        if not (obj.get("metadata") or {}).get("uid"):
            return None
        return podgroup.build(spec.defaulted(obj, scheduler_name=ctx.scheduler_name), ctx.priorities)

    def finished(self, obj: dict[str, Any]) -> bool:
        phase = ((obj.get("status") or {}).get("state") or {}).get("phase")
        return phase in spec.FINISHED
