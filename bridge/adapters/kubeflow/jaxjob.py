"""JAXJob ``kubeflow.org/v1`` (training-operator): ``Worker``s only (worker 0 is the coordinator),
all in the gang."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.adapters.kubeflow import family as kubeflow

__all__ = ["JAXJobAdapter"]


class JAXJobAdapter(kubeflow.KubeflowAdapter):
    registration = kubeflow.registration("kubeflow.org/jaxjob", "JAXJob", "jaxjobs")
    replica_field = "jaxReplicaSpecs"
    roles = ("Worker",)

    def validate_spec(self, spec: Mapping[str, Any]) -> None:
        kubeflow.known_roles(self, spec)
