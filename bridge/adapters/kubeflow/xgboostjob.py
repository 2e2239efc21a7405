"""XGBoostJob ``kubeflow.org/v1`` (training-operator): one ``Master`` (exactly one replica) and
``Worker``s, all in the gang; replica types other than those two are denied, as the operator's
validating webhook denies them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import errors
from bridge.adapters.kubeflow import family as kubeflow

__all__ = ["XGBoostJobAdapter"]


class XGBoostJobAdapter(kubeflow.KubeflowAdapter):
    registration = kubeflow.registration("kubeflow.org/xgboostjob", "XGBoostJob", "xgboostjobs")
    replica_field = "xgbReplicaSpecs"
    roles = ("Master", "Worker")

    def validate_spec(self, spec: Mapping[str, Any]) -> None:
        specs = kubeflow.known_roles(self, spec)
        master = specs.get("Master")
        if master is None:
            raise errors.InvalidObjectError(f"spec.{self.replica_field}.Master is required (the job's tracker)")
        if master.get("replicas") != 1:
            raise errors.InvalidObjectError(
                f"spec.{self.replica_field}.Master.replicas must be 1, got {master.get('replicas')!r}"
            )
