"""Which PodGroup a workload has, and who should create its pods. Pure.

``resolve(snapshot, kind, namespace, name)`` finds the group of ``pg|podgroup`` or of a job
kind by one of its names (``kinds``: each registered kind's ``Workload.aliases`` in
``bridge.adapters.registry``, e.g. ``tfjob``, ``mpijob``, ``sparkapp``, ``vcjob``): the
PodGroup whose ownerReference is that object, else the name its controller gives the group
(``Workload.group_name``: ``spark-<app>-pg`` for a SparkApplication, the job's own name for
the Kubeflow kinds; ``<job>-<uid>`` for a Volcano Job) among the groups nothing owns yet: a kind
named outright never falls back to a group of another kind. A ``pg`` name that is no group's is
tried the same ways. Who creates a group's pods is ``api.owners.creator``.
"""

from __future__ import annotations

from bridge.adapters import registry
from scheduler import errors as scheduler_errors
from scheduler.api import snapshot

__all__ = ["kinds", "resolve"]

_PODGROUP = {"pg": "PodGroup", "podgroup": "PodGroup", "podgroups": "PodGroup"}


def kinds() -> dict[str, str]:
    """Command-line kind → the ownerReference kind of the object that owns its PodGroup."""
    return _PODGROUP | {alias: k.kind for k in registry.kinds() for alias in k.workload.aliases}


def _group_name(owner_kind: str, name: str) -> str:
    known = registry.named(owner_kind)
    return (known.workload.group_name if known is not None else "{name}").format(name=name)


def resolve(snap: snapshot.Snapshot, kind: str, namespace: str, name: str) -> str:
    """The key of the PodGroup of the workload ``kind/name`` in ``namespace``."""
    known = kinds()
    owner_kind = known.get(kind.lower())
    if owner_kind is None:
        raise scheduler_errors.SchedulerError(f"unknown kind {kind!r}; one of {', '.join(sorted(known))}")
    here = {k: j for k, j in snap.jobs.items() if j.namespace == namespace}
    if owner_kind == "PodGroup":
        if f"{namespace}/{name}" in here:
            return f"{namespace}/{name}"
        owned = [k for k, j in here.items() if j.owner is not None and j.owner[1] == name]
        # the names the kinds' controllers give their groups, other than the job's own
        made = {k.workload.group_name.format(name=name) for k in registry.kinds()} - {name}
        conventional = [f"{namespace}/{n}" for n in sorted(made)]
    else:
        owned = [k for k, j in here.items() if j.owner == (owner_kind, name)]
        conventional = [f"{namespace}/{_group_name(owner_kind, name)}"]
        # A kind named outright: a group another kind owns is never its (vcjob/x is not tfjob/x's).
        conventional = [k for k in conventional if k in here and here[k].owner is None]
    if owner_kind in ("Job", "PodGroup"):  # a Volcano Job's group is <job>-<uid>
        owned += [k for k, j in here.items() if j.owner is None and j.name.startswith(f"{name}-") and k not in owned]
    found = sorted(owned) or [k for k in conventional if k in here]
    if not found:
        what = "podgroup" if owner_kind == "PodGroup" else f"no PodGroup for {kind}"
        raise scheduler_errors.SchedulerError(f"{what} {namespace}/{name} not found")
    return found[0]
