"""The stage rule: which of a JobSet's pods exist together, and in what order they arrive. Pure.

A stage is the set of pods that exist together. The JobSet controller (v0.12) creates a
replicatedJob's Jobs only once what it waits for is reached, so:

- replicatedJobs without ``dependsOn`` start together (the first stage);
- one that ``dependsOn`` another (``Ready``: all its Jobs ready; ``Complete``: all succeeded), or
  that comes later under ``startupPolicyOrder: InOrder`` (the previous one's Jobs all started:
  read as ``dependsOn: previous Ready``), is a later stage; replicatedJobs waiting for the same
  things are one stage;
- the pods of a replicatedJob are ``replicas`` × the pods of one Job (``parallelism``, default 1,
  at most ``completions``);
- under exclusive topology (``alpha.jobset.sigs.k8s.io/exclusive-topology`` on the JobSet or the
  replicatedJob's template, without ``.../node-selector``) JobSet's pod webhook refuses a Job's
  followers until its leader (completion index 0) is scheduled: the stage holds one leader per
  Job, and the followers are the next stage.

How a plan maps onto one PodGroup (``bridge.adapters.jobset.adapter``), the Spark model:
``minMember`` and ``minTaskMember`` are the first stage's pods, so that stage is all or nothing and
no stage waits for pods that appear only after it runs (our gang plugin holds a whole group while
a ``minTaskMember`` task has too few pods; Volcano's skips every per-task check once minMember is
below their sum). ``minResources`` is ``room``, the most that may run at once: once the first
stage runs, the scheduler holds what is left of it for the later stages (``scheduler.plugins.
stages``). ``room`` is not the plain sum: a replicatedJob that another (or one of its ancestors)
waits for with ``Complete`` is over before that one starts (torchtune's initializers and its
trainer never coexist). Per resource, it is the most that the replicatedJobs that may run beside
any one of them ask for: exact for a chain (every Trainer runtime, ``InOrder``), never below the
truth (two branches may be counted together though one ends before the other starts).
``Plan.describe`` is the stages as the group's ``vbridge.io/stages`` annotation carries them, for
the scheduler's hold, ``explain`` and the native backend's one ``podGroupTemplate`` per stage.
"""

from __future__ import annotations

import dataclasses
import fractions
from collections.abc import Mapping
from typing import Any

from bridge import errors, podresources, staging

__all__ = ["EXCLUSIVE", "NODE_SELECTOR", "STATUSES", "Part", "Plan", "parts", "plan"]

EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR = "alpha.jobset.sigs.k8s.io/node-selector"
STATUSES = ("Ready", "Complete")


@dataclasses.dataclass(frozen=True)
class Part:
    """A replicatedJob as the rule reads it."""

    name: str
    jobs: int  # replicas
    per_job: int  # pods of one Job: min(parallelism, completions)
    requests: podresources.Amounts  # one pod's
    after: tuple[tuple[str, str], ...]  # (replicatedJob, "Ready" | "Complete") it waits for
    exclusive: bool = False  # followers come only once the Job's leader is scheduled

    @property
    def pods(self) -> int:
        return self.jobs * self.per_job


@dataclasses.dataclass(frozen=True)
class Plan:
    # In the order they can start (each its (replicatedJob, pods) in replicatedJob order, and what
    # releases it); empty when the JobSet makes no pods.
    stages: tuple[staging.Stage, ...]
    room: podresources.Amounts  # the most its pods may ask for at once

    def describe(self) -> str:
        """The stages as the group's ``keys.STAGES`` carries them (``bridge.staging``)."""
        return staging.encode((dict(s.tasks), s.after) for s in self.stages)


def _count(value: Any, what: str, default: int) -> int:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise errors.InvalidObjectError(f"{what} must be a non-negative integer, got {value!r}")
    return value


def _exclusive(jobset_annotations: Mapping[str, str], template_annotations: Mapping[str, str]) -> bool:
    """JobSet's leader/follower placement applies (a replicatedJob's annotation wins over the JobSet's)."""
    if EXCLUSIVE in template_annotations:
        return NODE_SELECTOR not in template_annotations
    return EXCLUSIVE in jobset_annotations and NODE_SELECTOR not in jobset_annotations


def _after(rj: Mapping[str, Any], i: int, names: list[str], in_order: bool) -> tuple[tuple[str, str], ...]:
    where = f"spec.replicatedJobs[{i}]"
    depends = rj.get("dependsOn") or []
    if in_order and depends:
        raise errors.InvalidObjectError(
            f"{where}: startupPolicyOrder InOrder and dependsOn cannot be used together (JobSet refuses it)"
        )
    if in_order:
        return ((names[i - 1], "Ready"),) if i else ()
    if depends and i == 0:
        raise errors.InvalidObjectError(f"{where}: the first replicatedJob cannot use dependsOn")
    out = []
    for j, dep in enumerate(depends):
        name, status = dep.get("name"), dep.get("status")
        if name not in names[:i]:
            raise errors.InvalidObjectError(
                f"{where}.dependsOn[{j}]: {name!r} is not a replicatedJob listed before {names[i]!r}"
            )
        if status not in STATUSES:
            raise errors.InvalidObjectError(f"{where}.dependsOn[{j}].status must be Ready or Complete, got {status!r}")
        out.append((str(name), str(status)))
    return tuple(out)


def parts(spec: Mapping[str, Any], annotations: Mapping[str, str] | None = None) -> list[Part]:
    """The replicatedJobs of a JobSet ``spec``; InvalidObjectError for what JobSet would refuse."""
    rjs = spec.get("replicatedJobs")
    if not isinstance(rjs, list) or not rjs:
        raise errors.InvalidObjectError("a JobSet needs spec.replicatedJobs")
    names = [rj.get("name") if isinstance(rj, Mapping) else None for rj in rjs]
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise errors.InvalidObjectError(f"spec.replicatedJobs[{i}].name must be a non-empty string")
        if name in names[:i]:
            raise errors.InvalidObjectError(f"spec.replicatedJobs[{i}].name {name!r} is used twice")
    in_order = ((spec.get("startupPolicy") or {}).get("startupPolicyOrder") or "AnyOrder") == "InOrder"
    out = []
    for i, rj in enumerate(rjs):
        where = f"spec.replicatedJobs[{i}]"
        job = rj.get("template") or {}
        job_spec = job.get("spec") or {}
        parallelism = _count(job_spec.get("parallelism"), f"{where}.template.spec.parallelism", 1)
        completions = job_spec.get("completions")
        per_job = min(parallelism, _count(completions, f"{where}.template.spec.completions", parallelism))
        pod_spec = (job_spec.get("template") or {}).get("spec") or {}
        out.append(
            Part(
                name=str(names[i]),
                jobs=_count(rj.get("replicas"), f"{where}.replicas", 1),
                per_job=per_job,
                requests=podresources.pod_requests(pod_spec, what=f"{where}.template.spec.template"),
                after=_after(rj, i, [str(n) for n in names], in_order),
                exclusive=_exclusive(annotations or {}, (job.get("metadata") or {}).get("annotations") or {}),
            )
        )
    return out


def _depth(part: Part, by_name: Mapping[str, Part], memo: dict[str, int]) -> int:
    """How many releases come before the part's first pods (its leaders, if exclusive). A
    dependency without pods is reached at once; one with pods once its last pods are (the
    followers of an exclusive one)."""
    if part.name not in memo:
        memo[part.name] = max(
            (
                _depth(dep, by_name, memo) + (_split(dep) + 1 if dep.pods else 0)
                for dep in (by_name[d] for d, _ in part.after)
            ),
            default=0,
        )
    return memo[part.name]


def _split(part: Part) -> int:
    """1 when the part's followers are a stage of their own."""
    return 1 if part.exclusive and part.per_job > 1 else 0


def _done_before(part: Part, by_name: Mapping[str, Part]) -> set[str]:
    """The replicatedJobs over before ``part`` starts: those it or an ancestor waits for with Complete."""
    out: set[str] = set()
    todo = [part]
    while todo:
        p = todo.pop()
        for dep, status in p.after:
            if status == "Complete":
                out.add(dep)
            todo.append(by_name[dep])
    return out


def _room(live: list[Part], by_name: Mapping[str, Part]) -> podresources.Amounts:
    """Per resource, the most the parts that may run together around any one of them ask for."""
    done = {p.name: _done_before(p, by_name) for p in live}
    best: podresources.Amounts = {}
    for p in live:
        together = [q for q in live if q.name not in done[p.name] and p.name not in done[q.name]]
        amounts = podresources.add(*(podresources.scale(q.requests, q.pods) for q in together))
        zero = fractions.Fraction(0)
        best = {k: max(best.get(k, zero), amounts.get(k, zero)) for k in {*best, *amounts}}
    return best


def plan(found: list[Part]) -> Plan:
    """The stages of ``found`` (``parts``) and the room they need; parts without pods release at once."""
    by_name = {p.name: p for p in found}
    memo: dict[str, int] = {}
    keyed: dict[tuple[int, str], dict[str, int]] = {}
    for p in found:
        if not p.pods:
            continue
        depth = _depth(p, by_name, memo)
        release = ", ".join(f"{d} {s}" for d, s in p.after if by_name[d].pods)
        first = p.jobs if _split(p) else p.pods
        keyed.setdefault((depth, release), {})[p.name] = first
        if _split(p):
            keyed.setdefault((depth + 1, f"leaders of {p.name} scheduled"), {})[p.name] = p.pods - first
    ordered = sorted(keyed.items(), key=lambda item: item[0][0])
    stages = tuple(staging.Stage(tasks=tuple(tasks.items()), after=release) for (_, release), tasks in ordered)
    return Plan(stages=stages, room=_room([p for p in found if p.pods], by_name))
