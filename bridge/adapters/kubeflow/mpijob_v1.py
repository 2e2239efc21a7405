"""MPIJob ``kubeflow.org/v1`` (training-operator): the launcher counts in the gang."""

from __future__ import annotations

from bridge.adapters.kubeflow import family as kubeflow


class MPIJobV1Adapter(kubeflow.KubeflowAdapter):
    registration = kubeflow.registration("kubeflow.org/mpijob-v1", "MPIJob", "mpijobs")
    replica_field = "mpiReplicaSpecs"
    roles = ("Launcher", "Worker")
