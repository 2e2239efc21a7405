"""Who creates a PodGroup's pods, by the kind that owns the group. Pure.

``creator(owner)`` is the one sentence the scheduler's condition on a group that waits for its
pods (``framework.verdicts``) and ``tools.explain`` both say: the operator named, e.g. "the
Kubeflow training-operator has not created them". The job kinds' sentences are their
``bridge.adapters.base.Workload.creates``, read from ``bridge.adapters.registry`` (pure: the
import contracts keep the adapters free of clients and facts, so the scheduler's core may read
their records).
"""

from __future__ import annotations

from bridge.adapters import registry

__all__ = ["creator"]


def creator(owner: tuple[str, str] | None) -> str:
    """Who should create a PodGroup's missing pods, by the ``(kind, name)`` that owns the group."""
    if owner is None:
        return "nothing owns this PodGroup: whoever made it creates its pods"
    kind, name = owner
    if kind == "Pod":
        return f"the Spark driver {name} has not created its executors yet"
    known = registry.named(kind)
    return known.workload.creates if known is not None else f"its owner, {kind} {name}, has not created them"
