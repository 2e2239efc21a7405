"""SparkConnect ``sparkoperator.k8s.io/v1alpha1`` (spark-operator v2.5's Spark Connect server).

The operator has no batch-scheduler support for this kind. It makes one server pod,
``<name>-server`` (labels ``spark-role: connect-server`` and ``sparkoperator.k8s.io/connect-name``),
from ``spec.server.template`` as written, with no resources of its own; inside it
``start-connect-server.sh`` is a client-mode Spark driver that creates the executors later, told
by ``--conf`` pairs: ``spec.sparkConf`` first, then the server's and executors' fields
(``cores``, ``memory``, ``instances``) and ``spec.dynamicAllocation``, which outrank it.

Ours unless the object is labelled ``vbridge.io/gang-scheduling=disabled`` or its server
template names a scheduler other than the default one or ours (theirs wins). One PodGroup,
``sparkconnect-<name>-pg`` (no SparkApplication's ``spark-<app>-pg`` or spark-submit's
``<app id>-podgroup`` can take the name), as for a client-mode application:

- minMember 1: only the server exists at first;
- minResources = what the server pod asks for (its template's requests, as the operator makes
  it) + the executors Spark starts with, sized from the conf the server's Spark sees, by Spark's
  rules (``bridge.adapters.spark.sizing``: instances, or with dynamic allocation the largest of
  instances, initialExecutors and minExecutors; memory overhead);
- the queue from the object's ``scheduling.volcano.sh/queue-name`` annotation, then the
  namespace's (``bridge.queues``).

Stamps: the server template gets the job kinds' shared stamp (``bridge.adapters.stamping``: the
group annotation and our scheduler, the native stamps on the native backend, on Volcano the
``vbridge.io/grouped`` label);
``spec.sparkConf`` gets ``bridge.adapters.spark.pod.executor_stamps`` (the confs a spark-submit
driver of ours gets), which make Spark create the executors in the same group. Once the server
runs, the scheduler holds the rest of minResources for them (``scheduler.plugins.spark``).
A SparkConnect is a server: it is never finished by its state (its group goes with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import errors, keys, patching, podgroups, podresources, validation
from bridge.adapters import base, shapes, stamping
from bridge.adapters.spark import application, sizing
from bridge.adapters.spark import pod as spark_pod

__all__ = ["SparkConnectAdapter", "group_name", "min_resources", "spark_conf"]

_DEFAULT_SCHEDULER = "default-scheduler"


def group_name(name: str) -> str:
    return f"sparkconnect-{name}-pg"


def _int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise errors.InvalidObjectError(f"{what} must be a positive integer, got {value!r}")
    return value


def spark_conf(spec: Mapping[str, Any]) -> dict[str, str]:
    """The conf the server's Spark is started with, as far as sizes go: ``sparkConf``, then the
    fields the operator passes after it (later ``--conf`` pairs win)."""
    server, executor = spec.get("server") or {}, spec.get("executor") or {}
    instances, dynamic, initial, minimum = application.executor_counts(spec)
    fields: dict[str, Any] = {
        "spark.driver.cores": _int(server.get("cores"), "spec.server.cores"),
        "spark.driver.memory": server.get("memory"),
        "spark.executor.instances": instances,
        "spark.executor.cores": _int(executor.get("cores"), "spec.executor.cores"),
        "spark.executor.memory": executor.get("memory"),
    }
    if dynamic:
        dyn = spec.get("dynamicAllocation") or {}
        fields.update(
            {
                "spark.dynamicAllocation.enabled": "true",
                "spark.dynamicAllocation.initialExecutors": initial,
                "spark.dynamicAllocation.minExecutors": minimum,
                "spark.dynamicAllocation.maxExecutors": dyn.get("maxExecutors"),
            }
        )
    conf = {str(k): str(v) for k, v in (spec.get("sparkConf") or {}).items()}
    return {**conf, **{k: str(v) for k, v in fields.items() if v is not None}}


def min_resources(spec: Mapping[str, Any]) -> dict[str, str]:
    """The server pod's requests + the executors Spark starts with, by Spark's rules."""
    template = (spec.get("server") or {}).get("template") or {}
    server = podresources.pod_requests(template.get("spec") or {}, what="server")
    executors = [sizing.requests(s) for s in sizing.executors_from_conf(spark_conf(spec))]
    return podresources.total([server, *executors])


def _theirs(template: Mapping[str, Any], ctx: base.Context) -> bool:
    """The server template names a scheduler that is neither the default one nor ours."""
    chosen = (template.get("spec") or {}).get("schedulerName")
    return chosen not in (None, "", _DEFAULT_SCHEDULER, ctx.scheduler_name)


class SparkConnectAdapter:
    registration = base.Registration(
        name="sparkoperator.k8s.io/sparkconnect",
        group="sparkoperator.k8s.io",
        versions=("v1alpha1",),
        kind="SparkConnect",
        plural="sparkconnects",
        failure_policy="Fail",
        why="an unstamped SparkConnect would start its server and executors without their gang",
        operations=("CREATE", "UPDATE"),
        generic_reconciler=True,
        shape=shapes.SparkConnect,
        workload=base.Workload(
            operator="spark-operator",
            creates="the spark-operator has not created them (it makes the server; the server's Spark its executors)",
            aliases=("sparkconnect", "sparkconnects"),
            group_name="sparkconnect-{name}-pg",
            state=("status", "state"),
        ),
    )

    def _ours(self, obj: Mapping[str, Any], ctx: base.Context) -> bool:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        if (meta.get("labels") or {}).get(keys.OPT_IN_LABEL) == "disabled":
            return False
        return not _theirs((spec.get("server") or {}).get("template") or {}, ctx)

    def _validated(self, obj: Mapping[str, Any], ctx: base.Context) -> bool:
        """Whether the object is ours; raises for a quantity or count its pods could not have."""
        spec = obj.get("spec") or {}
        for role in ("server", "executor"):
            validation.pod_template((spec.get(role) or {}).get("template"), f"spec.{role}.template")
        if not self._ours(obj, ctx):
            return False
        sizing.jvm_mib((spec.get("server") or {}).get("memory"), what="spec.server.memory")
        min_resources(spec)  # a size Spark would refuse is denied now, not found by the reconciler
        return True

    def _queue(self, obj: Mapping[str, Any], ctx: base.Context) -> str:
        return ctx.queue(field=None, annotations=(obj.get("metadata") or {}).get("annotations"))

    def queue_of(self, obj: dict[str, Any], ctx: base.Context) -> str | None:
        if not self._ours(obj, ctx):
            return None
        return ctx.resolve(field=None, annotations=(obj.get("metadata") or {}).get("annotations"))

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        """Stamped, with its queue checked and its sizes validated (the group is the reconciler's)."""
        if not self._validated(obj, ctx):
            return None
        self._queue(obj, ctx)
        name = group_name((obj.get("metadata") or {}).get("name") or "")
        spec = obj.get("spec") or {}
        server = stamping.template((spec.get("server") or {}).get("template"), name, ctx)
        desired = patching.assoc(obj, ("spec", "server", "template"), server)
        conf = {**(spec.get("sparkConf") or {}), **spark_pod.executor_stamps(name, ctx)}
        return base.Admission(desired=patching.assoc(desired, ("spec", "sparkConf"), conf))

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        if not self._validated(obj, ctx):
            return None
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        template = (spec.get("server") or {}).get("template") or {}
        return podgroups.build(
            name=group_name(meta.get("name") or ""),
            namespace=meta.get("namespace") or ctx.namespace,
            min_member=1,
            queue=self._queue(obj, ctx),
            min_resources=min_resources(spec),
            priority_class=(template.get("spec") or {}).get("priorityClassName"),
        )

    def finished(self, obj: dict[str, Any]) -> bool:
        """Failed, the only final state the operator names; a server otherwise runs until deleted."""
        return (obj.get("status") or {}).get("state") == "Failed"
