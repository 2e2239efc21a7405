"""MPIJob ``kubeflow.org/v1`` (training-operator): the launcher counts in the gang."""

from __future__ import annotations

from bridge.adapters import base
from bridge.adapters.kubeflow import family as kubeflow


class MPIJobV1Adapter(kubeflow.KubeflowAdapter):
    registration = base.Registration(
        name="kubeflow.org/mpijob-v1",
        group="kubeflow.org",
        versions=("v1",),
        kind="MPIJob",
        plural="mpijobs",
        failure_policy="Fail",
        why="an unstamped MPIJob would start piecemeal; denying is safer than a silent no-gang",
        generic_reconciler=True,
    )
    replica_field = "mpiReplicaSpecs"
    roles = ("Launcher", "Worker")
