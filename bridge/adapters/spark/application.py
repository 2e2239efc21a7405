"""SparkApplication ``sparkoperator.k8s.io/v1beta2`` (Kubeflow spark-operator).

Ours when ``spec.batchScheduler`` is ``volcano``, or when it is unset and the namespace carries
the label ``vbridge.io/gang-scheduling=enabled``. The PodGroup is named as the operator names it
(``spark-<app>-pg``) so the two converge. minMember is 1: only the driver exists at first and it
creates the executors later. The gang is carried by minResources = driver + N executors (cluster
mode; executors only in client mode), computed by Spark's own rules (``bridge.adapters.spark.sizing``);
``batchSchedulerOptions.resources`` replaces it when set.

Every application, ours or not, has its Kubernetes quantities held to what apimachinery keeps as
written (``bridge.validation``): each role's ``coreRequest`` and ``coreLimit``, its pod
``template`` (spark-operator v2), and ``spec.volumes``; its pods would reach the apiserver with them.

The application is stamped so its pods join the group whatever the operator's flags: the group
annotation in ``spec.{driver,executor}.annotations`` (the operator turns those into Spark confs)
and ``spark.kubernetes.scheduler.name`` in ``sparkConf`` unless the user set it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from bridge import errors, keys, podgroups, validation
from bridge.adapters import base, shapes
from bridge.adapters.spark import sizing

__all__ = ["SparkApplicationAdapter", "executor_counts", "group_name", "min_resources"]

_DONE = {"COMPLETED", "FAILED"}


def group_name(app: str) -> str:
    return f"spark-{app}-pg"


def _int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.InvalidObjectError(f"{what} must be an integer, got {value!r}")
    return value


def _count(value: Any, what: str) -> int | None:
    out = _int(value, what)
    if out is not None and out < 0:
        raise errors.InvalidObjectError(f"{what} must not be negative, got {out}")
    return out


def executor_counts(spec: Mapping[str, Any]) -> tuple[int | None, bool, int | None, int | None]:
    """(instances, dynamic, initial, minimum), each checked as Spark checks them: no count is
    negative, minExecutors is at most maxExecutors, and dynamic allocation allows some executor.
    A SparkConnect's ``executor`` and ``dynamicAllocation`` have the same fields (``connect``)."""
    executor = spec.get("executor") or {}
    dyn = spec.get("dynamicAllocation") or {}
    instances = _count(executor.get("instances"), "executor.instances")
    initial = _count(dyn.get("initialExecutors"), "dynamicAllocation.initialExecutors")
    minimum = _count(dyn.get("minExecutors"), "dynamicAllocation.minExecutors")
    maximum = _count(dyn.get("maxExecutors"), "dynamicAllocation.maxExecutors")
    dynamic = bool(dyn.get("enabled"))
    if minimum is not None and maximum is not None and minimum > maximum:
        raise errors.InvalidObjectError(
            f"dynamicAllocation.minExecutors ({minimum}) must be at most dynamicAllocation.maxExecutors ({maximum})"
        )
    if dynamic and maximum == 0:
        raise errors.InvalidObjectError("dynamicAllocation.maxExecutors cannot be 0 with dynamic allocation enabled")
    return instances, dynamic, initial, minimum


def min_resources(spec: Mapping[str, Any]) -> dict[str, str]:
    """Driver + N executors (executors only in client mode) by Spark's rules."""
    conf = {k: str(v) for k, v in (spec.get("sparkConf") or {}).items()}
    non_jvm = str(spec.get("type", "")).lower() in ("python", "r")
    executor = spec.get("executor") or {}
    instances, dynamic, initial, minimum = executor_counts(spec)
    count = sizing.executor_count(instances=instances, dynamic=dynamic, initial=initial, minimum=minimum)
    sizes = [sizing.pod_size(_role(spec, executor, conf, "executor"), non_jvm=non_jvm, what="executor").times(count)]
    if spec.get("mode", "cluster") == "cluster":
        driver = sizing.pod_size(_role(spec, spec.get("driver") or {}, conf, "driver"), non_jvm=non_jvm, what="driver")
        sizes.insert(0, driver)
    return sizing.total(sizes)


def _quantities(spec: Mapping[str, Any]) -> None:
    """Raise for a Kubernetes quantity of the application out of apimachinery's bounds, naming it."""
    for name in ("driver", "executor"):
        role = spec.get(name)
        if not isinstance(role, Mapping):
            continue
        for field in ("coreRequest", "coreLimit"):
            if role.get(field) is not None:
                validation.quantity_at(role[field], f"spec.{name}.{field}")
        validation.pod_template(role.get("template"), f"spec.{name}.template")
    validation.volumes(spec.get("volumes"), "spec.volumes")


def _role(spec: Mapping[str, Any], role: Mapping[str, Any], conf: Mapping[str, str], name: str) -> sizing.Role:
    factor = role.get("memoryOverheadFactor") or spec.get("memoryOverheadFactor")
    return sizing.role(conf, name, {**role, "memoryOverheadFactor": factor})


class SparkApplicationAdapter:
    registration = base.Registration(
        name="sparkoperator.k8s.io/sparkapplication",
        group="sparkoperator.k8s.io",
        versions=("v1beta2",),
        kind="SparkApplication",
        plural="sparkapplications",
        failure_policy="Fail",
        why="a SparkApplication that asked for volcano and is let through unstamped would run without its gang",
        operations=("CREATE", "UPDATE"),
        generic_reconciler=True,
        shape=shapes.SparkApplication,
        workload=base.Workload(
            operator="spark-operator",
            creates="the spark-operator has not created them (it makes the driver; the driver its executors)",
            aliases=("sparkapplication", "sparkapplications", "sparkapp"),
            group_name="spark-{name}-pg",
            state=("status", "applicationState", "state"),
        ),
    )

    def _ours(self, obj: Mapping[str, Any], ctx: base.Context) -> bool:
        spec = obj.get("spec") or {}
        scheduler = spec.get("batchScheduler")
        opted_in = ctx.namespace_labels.get(keys.OPT_IN_LABEL) == "enabled"
        if not (scheduler == "volcano" or (scheduler in (None, "") and opted_in)):
            return False
        # in-cluster-client: no separate driver pod to gang with; the operator makes no PodGroup either
        return spec.get("mode") != "in-cluster-client"

    def _resources(self, obj: Mapping[str, Any]) -> dict[str, str]:
        spec = obj.get("spec") or {}
        given = (spec.get("batchSchedulerOptions") or {}).get("resources")
        if given:
            executor_counts(spec)  # the counts Spark will refuse are refused even when sizes are given
            validation.resource_list(given, "batchSchedulerOptions.resources")
            return dict(given)
        return min_resources(spec)

    def _queue(self, obj: Mapping[str, Any], ctx: base.Context) -> str:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        options = spec.get("batchSchedulerOptions") or {}
        return ctx.queue(field=options.get("queue"), annotations=meta.get("annotations"))

    def queue_of(self, obj: dict[str, Any], ctx: base.Context) -> str | None:
        if not self._ours(obj, ctx):
            return None
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        options = spec.get("batchSchedulerOptions") or {}
        return ctx.resolve(field=options.get("queue"), annotations=meta.get("annotations"))

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        """Stamped, with its queue checked and its sizes validated (the group is the reconciler's)."""
        _quantities(obj.get("spec") or {})
        if not self._ours(obj, ctx):
            return None
        meta = obj.get("metadata") or {}
        name = group_name(meta.get("name") or "")
        self._queue(obj, ctx)
        self._resources(obj)  # a size Spark would refuse is denied now, not found by the reconciler
        desired = copy.deepcopy(obj)
        dspec = desired["spec"] = desired.get("spec") or {}
        for role in ("driver", "executor"):
            part = dspec[role] = dspec.get(role) or {}  # null is as good as absent
            part["annotations"] = {**(part.get("annotations") or {}), keys.GROUP_NAME: name}
            if part.get("schedulerName") in (None, "", "default-scheduler"):
                part["schedulerName"] = ctx.scheduler_name
        # Executors on our scheduler come out grouped, so the pod webhook skips them; the driver
        # still needs it (its gate). On the native backend every pod needs it (``schedulingGroup``
        # is set on the pod, never in the application): no label, the pods name our scheduler
        # and the pod webhook moves them to kube-scheduler.
        if dspec["executor"].get("schedulerName") == ctx.scheduler_name and not ctx.native:
            dspec["executor"]["labels"] = {**(dspec["executor"].get("labels") or {}), keys.GROUPED_LABEL: "true"}
        dspec["sparkConf"] = {"spark.kubernetes.scheduler.name": ctx.scheduler_name, **(dspec.get("sparkConf") or {})}
        return base.Admission(desired=desired)

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        if not self._ours(obj, ctx):
            return None
        meta = obj.get("metadata") or {}
        options = (obj.get("spec") or {}).get("batchSchedulerOptions") or {}
        return podgroups.build(
            name=group_name(meta.get("name") or ""),
            namespace=meta.get("namespace") or ctx.namespace,
            min_member=1,
            queue=self._queue(obj, ctx),
            min_resources=self._resources(obj),
            priority_class=options.get("priorityClassName"),
        )

    def finished(self, obj: dict[str, Any]) -> bool:
        """COMPLETED or FAILED: the operator's final application states."""
        return ((obj.get("status") or {}).get("applicationState") or {}).get("state") in _DONE
