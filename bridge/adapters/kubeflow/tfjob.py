"""TFJob ``kubeflow.org/v1``."""

from __future__ import annotations

from bridge.adapters import base
from bridge.adapters.kubeflow import family as kubeflow


class TFJobAdapter(kubeflow.KubeflowAdapter):
    registration = base.Registration(
        name="kubeflow.org/tfjob",
        group="kubeflow.org",
        versions=("v1",),
        kind="TFJob",
        plural="tfjobs",
        failure_policy="Fail",
        why="an unstamped TFJob would start piecemeal; denying is safer than a silent no-gang",
        generic_reconciler=True,
    )
    replica_field = "tfReplicaSpecs"
    roles = ("Chief", "Master", "PS", "Worker", "Evaluator")
