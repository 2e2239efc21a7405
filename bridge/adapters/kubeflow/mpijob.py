"""MPIJob ``kubeflow.org/v2beta1`` (mpi-operator).

With ``launcherCreationPolicy: WaitForWorkersReady`` the launcher is created only after the
workers run, so it must not count in the gang (counting it deadlocks: mpi-operator#608). With
``AtStartup`` (the default) the gang is workers + 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.adapters.kubeflow import family as kubeflow
from bridge.adapters.kubeflow import mpijob_v1 as mpi_job_v1

__all__ = ["MPIJobAdapter"]


class MPIJobAdapter(mpi_job_v1.MPIJobV1Adapter):
    """The v1 family member with another version and the launcher policy; same field and roles."""

    registration = kubeflow.registration(
        "kubeflow.org/mpijob", "MPIJob", "mpijobs", version="v2beta1", runs=mpi_job_v1.WORKLOAD
    )

    def gang_roles(self, spec: Mapping[str, Any], replicas: Mapping[str, int]) -> list[str]:
        if spec.get("launcherCreationPolicy") == "WaitForWorkersReady":
            return [r for r in replicas if r != "Launcher"]
        return list(replicas)
