"""TFJob ``kubeflow.org/v1``."""

from __future__ import annotations

from bridge.adapters.kubeflow import family as kubeflow

__all__ = ["TFJobAdapter"]


class TFJobAdapter(kubeflow.KubeflowAdapter):
    registration = kubeflow.registration("kubeflow.org/tfjob", "TFJob", "tfjobs")
    replica_field = "tfReplicaSpecs"
    roles = ("Chief", "Master", "PS", "Worker", "Evaluator")
