"""Who creates a PodGroup's pods, by the kind that owns the group. Pure.

``creator(owner)`` is the one sentence the scheduler's condition on a group that waits for its
pods (``framework.verdicts``) and ``tools.explain`` both say: the operator named, e.g. "the
Kubeflow training-operator has not created them".
"""

from __future__ import annotations

__all__ = ["creator"]

_TRAINING = "the Kubeflow training-operator has not created them"
_CREATORS = {
    "TFJob": _TRAINING,
    "PyTorchJob": _TRAINING,
    "MPIJob": "the Kubeflow training-operator (or mpi-operator) has not created them",
    "SparkApplication": "the spark-operator has not created them (it makes the driver; the driver its executors)",
    "SparkConnect": "the spark-operator has not created them (it makes the server; the server's Spark its executors)",
    "Job": "the Volcano Job controller (vbridge controllers) has not created them",
}


def creator(owner: tuple[str, str] | None) -> str:
    """Who should create a PodGroup's missing pods, by the ``(kind, name)`` that owns the group."""
    if owner is None:
        return "nothing owns this PodGroup: whoever made it creates its pods"
    kind, name = owner
    if kind == "Pod":
        return f"the Spark driver {name} has not created its executors yet"
    return _CREATORS.get(kind, f"its owner, {kind} {name}, has not created them")
