"""SparkApplication ``sparkoperator.k8s.io/v1beta2`` (Kubeflow spark-operator).

Ours when ``spec.batchScheduler`` is ``volcano``, or when it is unset and the namespace carries
the label ``vbridge.io/gang-scheduling=enabled``. The PodGroup is named as the operator names it
(``spark-<app>-pg``) so the two converge. minMember is 1: only the driver exists at first and it
creates the executors later. The gang is carried by minResources = driver + N executors (cluster
mode; executors only in client mode), computed by Spark's own rules (``bridge.adapters.spark.sizing``);
``batchSchedulerOptions.resources`` replaces it when set.

The application is stamped so its pods join the group whatever the operator's flags: the group
annotation in ``spec.{driver,executor}.annotations`` (the operator turns those into Spark confs)
and ``spark.kubernetes.scheduler.name`` in ``sparkConf`` unless the user set it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from bridge import errors, keys, podgroups
from bridge.adapters import base
from bridge.adapters.spark import sizing

__all__ = ["SparkApplicationAdapter", "group_name", "min_resources"]


def group_name(app: str) -> str:
    return f"spark-{app}-pg"


def _int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.InvalidObjectError(f"{what} must be an integer, got {value!r}")
    return value


def _role(spec: Mapping[str, Any], role: Mapping[str, Any], conf: Mapping[str, str], name: str) -> sizing.Role:
    gpu = role.get("gpu") or {}
    factor = (
        role.get("memoryOverheadFactor")
        or spec.get("memoryOverheadFactor")
        or conf.get(f"spark.{name}.memoryOverheadFactor")
        or conf.get("spark.kubernetes.memoryOverheadFactor")
    )
    try:
        factor_value = float(factor) if factor not in (None, "") else None
    except (TypeError, ValueError):
        raise errors.InvalidObjectError(f"memoryOverheadFactor must be a number, got {factor!r}") from None
    off_heap = conf.get("spark.memory.offHeap.size") if conf.get("spark.memory.offHeap.enabled") == "true" else None
    return sizing.Role(
        memory=role.get("memory") or conf.get(f"spark.{name}.memory"),
        overhead=role.get("memoryOverhead") or conf.get(f"spark.{name}.memoryOverhead"),
        overhead_factor=factor_value,
        min_overhead=conf.get(f"spark.{name}.minMemoryOverhead"),
        cores=role.get("cores") or conf.get(f"spark.{name}.cores"),
        core_request=role.get("coreRequest") or conf.get(f"spark.kubernetes.{name}.request.cores"),
        pyspark_memory=conf.get("spark.executor.pyspark.memory") if name == "executor" else None,
        off_heap=off_heap if name == "executor" else None,
        gpus={gpu["name"]: int(gpu.get("quantity", 0))} if gpu.get("name") else {},
    )


def min_resources(spec: Mapping[str, Any]) -> dict[str, str]:
    """Driver + N executors (executors only in client mode) by Spark's rules."""
    conf = {k: str(v) for k, v in (spec.get("sparkConf") or {}).items()}
    non_jvm = str(spec.get("type", "")).lower() in ("python", "r")
    executor = spec.get("executor") or {}
    dyn = spec.get("dynamicAllocation") or {}
    count = sizing.executor_count(
        instances=_int(executor.get("instances"), "executor.instances"),
        dynamic=bool(dyn.get("enabled")),
        initial=_int(dyn.get("initialExecutors"), "dynamicAllocation.initialExecutors"),
        minimum=_int(dyn.get("minExecutors"), "dynamicAllocation.minExecutors"),
    )
    sizes = [sizing.pod_size(_role(spec, executor, conf, "executor"), non_jvm=non_jvm, what="executor").times(count)]
    if spec.get("mode", "cluster") == "cluster":
        driver = sizing.pod_size(_role(spec, spec.get("driver") or {}, conf, "driver"), non_jvm=non_jvm, what="driver")
        sizes.insert(0, driver)
    return sizing.total(sizes)


class SparkApplicationAdapter:
    registration = base.Registration(
        name="sparkoperator.k8s.io/sparkapplication",
        group="sparkoperator.k8s.io",
        versions=("v1beta2",),
        kind="SparkApplication",
        plural="sparkapplications",
        failure_policy="Fail",
        why="a SparkApplication that asked for volcano and is let through unstamped would run without its gang",
    )

    def translate(self, obj: dict[str, Any], ctx: base.Context) -> base.Translation | None:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        scheduler = spec.get("batchScheduler")
        opted_in = ctx.namespace_labels.get(keys.OPT_IN_LABEL) == "enabled"
        if not (scheduler == "volcano" or (scheduler in (None, "") and opted_in)):
            return None
        if spec.get("mode") == "in-cluster-client":
            return None  # no separate driver pod to gang with; the operator makes no PodGroup either
        options = spec.get("batchSchedulerOptions") or {}
        name = group_name(meta.get("name") or "")
        queue = ctx.queue(field=options.get("queue"), annotations=meta.get("annotations"))
        resources = options.get("resources") or min_resources(spec)
        desired = copy.deepcopy(obj)
        dspec = desired.setdefault("spec", {})
        for role in ("driver", "executor"):
            part = dspec.setdefault(role, {})
            part.setdefault("annotations", {})[keys.GROUP_NAME] = name
            if part.get("schedulerName") in (None, "", "default-scheduler"):
                part["schedulerName"] = ctx.scheduler_name
        # Executors on our scheduler come out grouped, so the pod webhook skips them; the driver
        # still needs it (its gate).
        if dspec["executor"].get("schedulerName") == ctx.scheduler_name:
            dspec["executor"].setdefault("labels", {})[keys.GROUPED_LABEL] = "true"
        dspec.setdefault("sparkConf", {}).setdefault("spark.kubernetes.scheduler.name", ctx.scheduler_name)
        group = podgroups.build(
            name=name,
            namespace=meta.get("namespace") or ctx.namespace,
            min_member=1,
            queue=queue,
            min_resources=resources,
            priority_class=options.get("priorityClassName"),
        )
        return base.Translation(desired=desired, podgroup=group)
