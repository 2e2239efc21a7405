"""PyTorchJob ``kubeflow.org/v1``; with ``elasticPolicy`` the gang is minReplicas workers (plus any Master)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.adapters.kubeflow import family as kubeflow

__all__ = ["PyTorchJobAdapter"]


class PyTorchJobAdapter(kubeflow.KubeflowAdapter):
    registration = kubeflow.registration("kubeflow.org/pytorchjob", "PyTorchJob", "pytorchjobs")
    replica_field = "pytorchReplicaSpecs"
    roles = ("Master", "Worker")

    def default_min_member(self, spec: Mapping[str, Any], replicas: Mapping[str, int]) -> int:
        elastic = spec.get("elasticPolicy") or {}
        if isinstance(elastic.get("minReplicas"), int):
            return int(elastic["minReplicas"]) + replicas.get("Master", 0)
        return super().default_min_member(spec, replicas)
