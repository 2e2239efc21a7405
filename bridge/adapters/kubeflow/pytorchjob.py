"""PyTorchJob ``kubeflow.org/v1``; with ``elasticPolicy`` the gang is minReplicas workers (plus any Master)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.adapters import base
from bridge.adapters.kubeflow import family as kubeflow


class PyTorchJobAdapter(kubeflow.KubeflowAdapter):
    registration = base.Registration(
        name="kubeflow.org/pytorchjob",
        group="kubeflow.org",
        versions=("v1",),
        kind="PyTorchJob",
        plural="pytorchjobs",
        failure_policy="Fail",
        why="an unstamped PyTorchJob would start piecemeal; denying is safer than a silent no-gang",
        generic_reconciler=True,
    )
    replica_field = "pytorchReplicaSpecs"
    roles = ("Master", "Worker")

    def default_min_member(self, spec: Mapping[str, Any], replicas: Mapping[str, int]) -> int:
        elastic = spec.get("elasticPolicy") or {}
        if isinstance(elastic.get("minReplicas"), int):
            return int(elastic["minReplicas"]) + replicas.get("Master", 0)
        return super().default_min_member(spec, replicas)
