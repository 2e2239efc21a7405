"""The JobSet adapter (``jobset.x-k8s.io/v1alpha2``, JobSet v0.12): the JobSet unchanged but for
its pod templates, and one PodGroup made from its stages (``stages``).

``admit`` checks the replicatedJobs as JobSet would (a denial names the member) and stamps each
replicatedJob's pod template (``bridge.adapters.stamping``: the group = the JobSet's name, the
task = the replicatedJob's name, our scheduler). JobSet copies those onto every Job and pod of
every restart; its replicatedJobs are immutable after CREATE unless suspended, so CREATE and
UPDATE are both stamped. ``podgroup``: ``minMember`` and ``minTaskMember`` the first stage's
pods, ``minResources`` the room of the whole, the stages in the ``vbridge.io/stages`` annotation,
``priorityClassName`` the first one a first-stage template names.

Not ours (admitted unchanged, no group): a JobSet labelled ``vbridge.io/gang-scheduling:
disabled``, one whose ``spec.managedBy`` names another controller (MultiKueue runs it
elsewhere), and one made before us, unstamped, while it runs (an UPDATE that stamped it would be
refused by JobSet; once suspended it is stamped, and its group made, on resume). ``podgroup``
makes a group only for a JobSet whose templates name it. Suspend needs nothing: a suspended
JobSet has no pods, its group waits, and on resume the stages start again from the first. A
restart (``RestartJobSet``, ``RestartJob``) re-creates Jobs from the same templates: the new pods
join the same group and carry ``jobset.sigs.k8s.io/restart-attempt``; that the old attempt's
pods never complete the new gang is the scheduler's to keep (with ``BlockingRecreate`` they are
gone before any new pod exists).

The queue: ``scheduling.volcano.sh/queue-name`` from the JobSet's annotations, else its labels,
then the namespace's annotation, then ``default``. ``kueue.x-k8s.io/queue-name`` names a Kueue
LocalQueue, never a Volcano queue: it is not read as one (Kueue admits the JobSet by unsuspending
it, then our gang places its pods), and admission says so in a warning. Finished: a
``terminalState``, or a true ``Completed`` or ``Failed`` condition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import keys, patching, podgroups, podresources, validation
from bridge.adapters import base, shapes, stamping
from bridge.adapters.jobset import stages
from bridge.native import workloads as native_workloads

__all__ = ["JobSetAdapter"]


def _queue_annotations(meta: Mapping[str, Any]) -> dict[str, str]:
    """The annotations queue resolution reads: the JobSet's, with its queue label under them."""
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    label = {keys.QUEUE_NAME: labels[keys.QUEUE_NAME]} if labels.get(keys.QUEUE_NAME) else {}
    return {**label, **annotations}


def _ours(obj: Mapping[str, Any]) -> bool:
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    if (meta.get("labels") or {}).get(keys.OPT_IN_LABEL) == "disabled":
        return False
    return spec.get("managedBy") in (None, "", keys.JOBSET_CONTROLLER)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _stamped(obj: Mapping[str, Any]) -> bool:
    """Its pods name its group: a pod template carries the group annotation we stamp. Reads any
    JSON (the old object of an UPDATE is not shaped)."""
    name = _map(obj.get("metadata")).get("name")
    rjs = _map(obj.get("spec")).get("replicatedJobs")
    for rj in rjs if isinstance(rjs, list) else []:
        template = _map(_map(_map(_map(rj).get("template")).get("spec")).get("template"))
        if name and _map(_map(template.get("metadata")).get("annotations")).get(keys.GROUP_NAME) == name:
            return True
    return False


def _frozen(obj: Mapping[str, Any], previous: Mapping[str, Any] | None) -> bool:
    """An UPDATE of a JobSet made before us, running: JobSet refuses any change to its templates."""
    if previous is None or _stamped(previous):
        return False
    return not any(_map(o.get("spec")).get("suspend") is True for o in (obj, previous))


def _checked(obj: Mapping[str, Any]) -> list[stages.Part]:
    """The replicatedJobs; denied naming the member (a pod template's quantities first, by their path)."""
    spec = obj.get("spec") or {}
    rjs = spec.get("replicatedJobs")
    for i, rj in enumerate(rjs if isinstance(rjs, list) else []):
        if isinstance(rj, Mapping):
            template = ((rj.get("template") or {}).get("spec") or {}).get("template")
            validation.pod_template(template, f"spec.replicatedJobs[{i}].template.spec.template")
    return stages.parts(spec, (obj.get("metadata") or {}).get("annotations"))


class JobSetAdapter:
    registration = base.Registration(
        name="jobset.x-k8s.io/jobset",
        group="jobset.x-k8s.io",
        versions=("v1alpha2",),
        kind="JobSet",
        plural="jobsets",
        failure_policy="Fail",
        why="an unstamped JobSet would start piecemeal, and its templates cannot be stamped once it runs",
        operations=("CREATE", "UPDATE"),
        generic_reconciler=True,
        shape=shapes.JobSet,
        workload=base.Workload(
            operator="jobset-controller",
            creates="the JobSet controller has not created them (it makes each replicatedJob's Jobs, a later "
            "stage's once the stage it depends on is Ready or Complete; the Jobs make the pods)",
            aliases=("jobset", "jobsets"),
        ),
    )

    def queue_of(self, obj: dict[str, Any], ctx: base.Context) -> str | None:
        return ctx.resolve(field=None, annotations=_queue_annotations(obj.get("metadata") or {}))

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        if not _ours(obj):
            return None
        parts = _checked(obj)  # bad input is denied even where we change nothing
        if _frozen(obj, ctx.previous):
            return None
        meta = obj.get("metadata") or {}
        queue = ctx.queue(field=None, annotations=_queue_annotations(meta))
        name = meta.get("name") or ""
        # On native, each replicatedJob's pods join their stage's native PodGroup.
        staged = [{task for task, _ in stage.tasks} for stage in stages.plan(parts).stages] if ctx.native else []
        stamped = []
        for rj in obj["spec"]["replicatedJobs"]:
            job = rj.get("template") or {}
            job_spec = job.get("spec") or {}
            native_group = native_workloads.stage_group(name, native_workloads.stage_of(staged, rj["name"]))
            template = stamping.template(
                job_spec.get("template"), name, ctx, task=rj["name"], native_group=native_group
            )
            stamped.append({**rj, "template": {**job, "spec": {**job_spec, "template": template}}})
        warnings = []
        kueue = (meta.get("labels") or {}).get(keys.KUEUE_QUEUE)
        if kueue:
            warnings.append(
                f"{keys.KUEUE_QUEUE} {kueue!r} is a Kueue LocalQueue, not a Volcano queue: "
                f"Kueue admits the JobSet, then its pods are ganged in queue {queue!r}"
            )
        desired = patching.assoc(obj, ("spec", "replicatedJobs"), stamped)
        return base.Admission(desired=desired, warnings=tuple(warnings))

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        if not _ours(obj) or not _stamped(obj):
            return None  # not ours, or made before us: its pods would not join a group
        plan = stages.plan(_checked(obj))
        if not plan.stages:
            return None  # no pods: nothing to group
        meta, first = obj.get("metadata") or {}, plan.stages[0]
        templates = {
            rj["name"]: (((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            for rj in obj["spec"]["replicatedJobs"]
        }
        priority = next((pc for task, _ in first.tasks if (pc := templates[task].get("priorityClassName"))), None)
        return podgroups.build(
            name=meta.get("name") or "",
            namespace=meta.get("namespace") or ctx.namespace,
            min_member=first.pods,
            queue=ctx.queue(field=None, annotations=_queue_annotations(meta)),
            min_resources=podresources.format_list(plan.room),
            min_task_member=dict(first.tasks),
            priority_class=priority,
            annotations={keys.STAGES: plan.describe()},
        )

    def finished(self, obj: dict[str, Any]) -> bool:
        status = obj.get("status") or {}
        if status.get("terminalState") in ("Completed", "Failed"):
            return True
        conditions = status.get("conditions") or []
        return any(c.get("type") in ("Completed", "Failed") and c.get("status") == "True" for c in conditions)
