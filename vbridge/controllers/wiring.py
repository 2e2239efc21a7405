"""Which reconcilers run, built from the adapter registry: nothing here names a kind but the two
kind families with controllers of their own.

- one ``jobs.JobReconciler`` per adapter registered with ``generic_reconciler``;
- ``spark.SparkReconciler``: spark-submit drivers and client-mode executors;
- ``vcjobs.VcJobController``: Volcano Jobs, and ``commands.CommandController``: vcctl's
  ``bus.volcano.sh`` Commands on Jobs and Queues (unless ``vcjobs`` is off: ``controllers
  --no-vcjobs``, for clusters where Volcano's own controllers run them);
- ``native.NativeReconciler`` on the native backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from bridge import defaults
from bridge import facts as cluster_facts
from bridge.adapters import base, registry
from bridge.k8s import client
from vbridge.controllers import commands as command_controller
from vbridge.controllers import jobs
from vbridge.controllers import native as native_controller
from vbridge.controllers import spark as spark_controller
from vbridge.controllers import vcjobs as vcjob_controller

__all__ = ["Reconciler", "reconcilers"]


class Reconciler(Protocol):
    async def run(self) -> None: ...


def reconcilers(
    api: client.Client,
    facts: cluster_facts.View,
    *,
    scheduler_name: str,
    templates_by_name: dict[str, dict[str, Any]],
    adapters: Sequence[base.Adapter] | None = None,
    vcjobs: bool = True,
    backend: str = "volcano",
) -> list[Reconciler]:
    """The reconcilers to run; ``backend`` "native" adds ``native.NativeReconciler`` (the Workload
    and PodGroup twins of every Volcano PodGroup) and makes Volcano Jobs' pods native.
    ``adapters``: ``registry.ADAPTERS`` as it is when called, unless given."""
    out: list[Reconciler] = [
        jobs.JobReconciler(api, a, facts, scheduler_name=scheduler_name)
        for a in (registry.ADAPTERS if adapters is None else adapters)
        if a.registration.generic_reconciler
    ]
    out.append(
        spark_controller.SparkReconciler(api, facts, scheduler_name=scheduler_name, templates_by_name=templates_by_name)
    )
    if vcjobs:
        out.append(
            vcjob_controller.VcJobController(
                api, scheduler_name=scheduler_name, native=backend == defaults.NATIVE, facts=facts
            )
        )
        out.append(command_controller.CommandController(api))
    if backend == "native":
        out.append(native_controller.NativeReconciler(api))
    return out
