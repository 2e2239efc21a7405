"""MPIJob ``kubeflow.org/v1`` (training-operator): the launcher counts in the gang; ``slotsPerWorker``
must be a positive integer (0 slots leave every worker without a rank)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import errors
from bridge.adapters import base
from bridge.adapters.kubeflow import family as kubeflow

__all__ = ["WORKLOAD", "MPIJobV1Adapter"]

# Both versions' records: one kind, whichever operator the cluster runs.
WORKLOAD = base.Workload(
    operator="training-operator (MPIJob v1) or mpi-operator (v2beta1)",
    creates="the Kubeflow training-operator (or mpi-operator) has not created them",
    aliases=("mpijob", "mpijobs"),
)


class MPIJobV1Adapter(kubeflow.KubeflowAdapter):
    registration = kubeflow.registration("kubeflow.org/mpijob-v1", "MPIJob", "mpijobs", runs=WORKLOAD)
    replica_field = "mpiReplicaSpecs"
    roles = ("Launcher", "Worker")

    def validate_spec(self, spec: Mapping[str, Any]) -> None:
        slots = spec.get("slotsPerWorker")
        if slots is not None and (not isinstance(slots, int) or isinstance(slots, bool) or slots < 1):
            raise errors.InvalidObjectError(f"slotsPerWorker must be a positive integer, got {slots!r}")
