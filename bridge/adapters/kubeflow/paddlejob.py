"""PaddleJob ``kubeflow.org/v1`` (training-operator): ``Master`` and ``Worker``, every replica in
the gang. ``elasticPolicy`` does not shrink the gang (unlike PyTorchJob's): the operator creates
every replica's pod whatever it says, so a gang of fewer would bind a part of the job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.adapters.kubeflow import family as kubeflow

__all__ = ["PaddleJobAdapter"]


class PaddleJobAdapter(kubeflow.KubeflowAdapter):
    registration = kubeflow.registration("kubeflow.org/paddlejob", "PaddleJob", "paddlejobs")
    replica_field = "paddleReplicaSpecs"
    roles = ("Master", "Worker")

    def validate_spec(self, spec: Mapping[str, Any]) -> None:
        kubeflow.known_roles(self, spec)
