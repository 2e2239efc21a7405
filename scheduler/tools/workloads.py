"""Which PodGroup a workload has, and who should create its pods. Pure.

``resolve(snapshot, kind, namespace, name)`` finds the group of ``pg|podgroup``, ``tfjob``,
``pytorchjob``, ``mpijob``, ``sparkapplication|sparkapp``, ``sparkconnect``,
``vcjob|job.batch.volcano.sh``: the PodGroup whose ownerReference is that object, else the name
its controller gives the group (``<job>-<uid>`` for a Volcano Job, ``spark-<app>-pg`` for a
SparkApplication, ``sparkconnect-<name>-pg`` for a SparkConnect, the job's own name for the
Kubeflow kinds) among the groups nothing owns yet: a kind named outright never
falls back to a group of another kind. A ``pg`` name that is no group's is tried the same ways.
Who creates a group's pods is ``api.owners.creator``.
"""

from __future__ import annotations

from scheduler import errors
from scheduler.api import snapshot

__all__ = ["KINDS", "resolve"]

# Command-line kind → the ownerReference kind of the object that owns its PodGroup.
KINDS = {
    "pg": "PodGroup",
    "podgroup": "PodGroup",
    "podgroups": "PodGroup",
    "tfjob": "TFJob",
    "pytorchjob": "PyTorchJob",
    "mpijob": "MPIJob",
    "sparkapplication": "SparkApplication",
    "sparkapp": "SparkApplication",
    "sparkconnect": "SparkConnect",
    "vcjob": "Job",
    "job.batch.volcano.sh": "Job",
}
# The group's name by the owner's kind, where it is not the owner's own name.
_NAMED = {"SparkApplication": "spark-{}-pg", "SparkConnect": "sparkconnect-{}-pg"}


def resolve(snap: snapshot.Snapshot, kind: str, namespace: str, name: str) -> str:
    """The key of the PodGroup of the workload ``kind/name`` in ``namespace``."""
    owner_kind = KINDS.get(kind.lower())
    if owner_kind is None:
        raise errors.SchedulerError(f"unknown kind {kind!r}; one of {', '.join(sorted(KINDS))}")
    here = {k: j for k, j in snap.jobs.items() if j.namespace == namespace}
    if owner_kind == "PodGroup":
        if f"{namespace}/{name}" in here:
            return f"{namespace}/{name}"
        owned = [k for k, j in here.items() if j.owner is not None and j.owner[1] == name]
        conventional = [f"{namespace}/spark-{name}-pg"]
    else:
        owned = [k for k, j in here.items() if j.owner == (owner_kind, name)]
        conventional = [f"{namespace}/" + _NAMED.get(owner_kind, "{}").format(name)]
        # A kind named outright: a group another kind owns is never its (vcjob/x is not tfjob/x's).
        conventional = [k for k in conventional if k in here and here[k].owner is None]
    if owner_kind in ("Job", "PodGroup"):  # a Volcano Job's group is <job>-<uid>
        owned += [k for k, j in here.items() if j.owner is None and j.name.startswith(f"{name}-") and k not in owned]
    found = sorted(owned) or [k for k in conventional if k in here]
    if not found:
        what = "podgroup" if owner_kind == "PodGroup" else f"no PodGroup for {kind}"
        raise errors.SchedulerError(f"{what} {namespace}/{name} not found")
    return found[0]
