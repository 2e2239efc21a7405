"""Every adapter, listed explicitly. The webhook configuration, the chart and the reconcilers
(``vbridge.controllers.wiring``) are generated from this."""

from __future__ import annotations

from bridge.adapters import base
from bridge.adapters.kubeflow import mpijob as mpi_job
from bridge.adapters.kubeflow import mpijob_v1 as mpi_job_v1
from bridge.adapters.kubeflow import pod as kubeflow_pod
from bridge.adapters.kubeflow import pytorchjob as pytorch_job
from bridge.adapters.kubeflow import tfjob as tf_job
from bridge.adapters.scheduling import command as command_kind
from bridge.adapters.scheduling import podgroup as podgroup_kind
from bridge.adapters.scheduling import queue as queue_kind
from bridge.adapters.spark import application as spark_application
from bridge.adapters.spark import connect as spark_connect
from bridge.adapters.spark import pod as spark_pod
from bridge.adapters.vcjob import adapter as volcano_job

__all__ = ["ADAPTERS", "by_path", "for_object"]

ADAPTERS: tuple[base.Adapter, ...] = (
    spark_application.SparkApplicationAdapter(),
    spark_connect.SparkConnectAdapter(),
    tf_job.TFJobAdapter(),
    pytorch_job.PyTorchJobAdapter(),
    mpi_job_v1.MPIJobV1Adapter(),
    mpi_job.MPIJobAdapter(),
    volcano_job.VolcanoJobAdapter(),
    spark_pod.SparkPodAdapter(),
    kubeflow_pod.KubeflowPodAdapter(),
    podgroup_kind.PodGroupAdapter(),
    queue_kind.QueueAdapter(),
    command_kind.CommandAdapter(),
)


_BY_PATH: dict[str, base.Adapter] = {a.registration.path: a for a in ADAPTERS}


def by_path(path: str) -> base.Adapter | None:
    return _BY_PATH.get(path)


def for_object(obj: dict[str, object]) -> list[base.Adapter]:
    """Adapters that may handle ``obj`` by its apiVersion and kind (used offline and by the reconciler)."""
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    return [
        a
        for a in ADAPTERS
        if a.registration.kind == obj.get("kind")
        and a.registration.group == group
        and version in a.registration.versions
    ]
