"""Every adapter, listed explicitly. The webhook configuration, the chart and the reconcilers
(``vbridge.controllers.wiring``) are generated from this; so are the job kinds the commands and
the scheduler name (``kinds``: one ``Kind`` per kind, every record of it merged, with every
version any of them serves). Callers read ``ADAPTERS`` when called, never at import, so a kind
added here (or in a test, to the tuple) shows everywhere."""

from __future__ import annotations

import dataclasses
import functools

from bridge.adapters import base
from bridge.adapters.jobset import adapter as jobset_adapter
from bridge.adapters.jobset import pod as jobset_pod
from bridge.adapters.kubeflow import jaxjob as jax_job
from bridge.adapters.kubeflow import mpijob as mpi_job
from bridge.adapters.kubeflow import mpijob_v1 as mpi_job_v1
from bridge.adapters.kubeflow import paddlejob as paddle_job
from bridge.adapters.kubeflow import pod as kubeflow_pod
from bridge.adapters.kubeflow import pytorchjob as pytorch_job
from bridge.adapters.kubeflow import tfjob
from bridge.adapters.kubeflow import xgboostjob as xgboost_job
from bridge.adapters.scheduling import command as command_kind
from bridge.adapters.scheduling import podgroup as podgroup_kind
from bridge.adapters.scheduling import queue as queue_kind
from bridge.adapters.spark import application
from bridge.adapters.spark import connect as spark_connect
from bridge.adapters.spark import pod as spark_pod
from bridge.adapters.vcjob import adapter as vcjob_adapter

__all__ = ["ADAPTERS", "Kind", "by_path", "for_object", "kinds", "named"]

ADAPTERS: tuple[base.Adapter, ...] = (
    application.SparkApplicationAdapter(),
    spark_connect.SparkConnectAdapter(),
    tfjob.TFJobAdapter(),
    pytorch_job.PyTorchJobAdapter(),
    mpi_job_v1.MPIJobV1Adapter(),
    mpi_job.MPIJobAdapter(),
    xgboost_job.XGBoostJobAdapter(),
    paddle_job.PaddleJobAdapter(),
    jax_job.JAXJobAdapter(),
    vcjob_adapter.VolcanoJobAdapter(),
    jobset_adapter.JobSetAdapter(),
    spark_pod.SparkPodAdapter(),
    kubeflow_pod.KubeflowPodAdapter(),
    jobset_pod.JobSetPodAdapter(),
    podgroup_kind.PodGroupAdapter(),
    queue_kind.QueueAdapter(),
    command_kind.CommandAdapter(),
)


def by_path(path: str) -> base.Adapter | None:
    """The adapter the webhook path ``/mutate/<name>`` routes to."""
    return _paths(ADAPTERS).get(path)


@functools.lru_cache(maxsize=8)
def _paths(adapters: tuple[base.Adapter, ...]) -> dict[str, base.Adapter]:
    return {a.registration.path: a for a in adapters}


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


@dataclasses.dataclass(frozen=True)
class Kind:
    """A job kind as the commands and the scheduler see it: the records of one group and kind,
    merged (MPIJob: training-operator's ``v1`` and mpi-operator's ``v2beta1``)."""

    group: str
    kind: str
    plural: str
    versions: tuple[str, ...]  # every version a record serves, in registry order
    workload: base.Workload

    @property
    def api_versions(self) -> tuple[str, ...]:
        return tuple(f"{self.group}/{v}" if self.group else v for v in self.versions)


def kinds() -> tuple[Kind, ...]:
    """The registered job kinds (records with a ``workload``), in registry order."""
    return _merged(ADAPTERS)


def named(kind: str) -> Kind | None:
    """The first registered job kind called ``kind`` (an ownerReference names a kind, not its group)."""
    return _by_name(ADAPTERS).get(kind)


@functools.lru_cache(maxsize=8)
def _by_name(adapters: tuple[base.Adapter, ...]) -> dict[str, Kind]:
    out: dict[str, Kind] = {}
    for k in _merged(adapters):
        out.setdefault(k.kind, k)
    return out


@functools.lru_cache(maxsize=8)
def _merged(adapters: tuple[base.Adapter, ...]) -> tuple[Kind, ...]:
    out: dict[tuple[str, str], Kind] = {}
    for adapter in adapters:
        reg = adapter.registration
        if reg.workload is None:
            continue
        seen = out.get((reg.group, reg.kind))
        if seen is None:
            out[(reg.group, reg.kind)] = Kind(reg.group, reg.kind, reg.plural, reg.versions, reg.workload)
            continue
        if (seen.plural, seen.workload) != (reg.plural, reg.workload):
            raise ValueError(f"{reg.name}: the records of {reg.kind}.{reg.group} disagree on its plural or workload")
        versions = seen.versions + tuple(v for v in reg.versions if v not in seen.versions)
        out[(reg.group, reg.kind)] = dataclasses.replace(seen, versions=versions)
    named: dict[str, str] = {}
    for k in out.values():
        for alias in k.workload.aliases:
            if named.setdefault(alias, k.kind) != k.kind:
                raise ValueError(f"{alias!r} names both {named[alias]} and {k.kind}")
    return tuple(out.values())
