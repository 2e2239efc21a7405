"""spark-submit pods (labels ``spark-app-selector`` and ``spark-role``).

Ours when the pod asks for our scheduler (``spark.kubernetes.scheduler.name``), or when the
spark-operator launched it for an application we stamped.

- Already annotated with ``scheduling.k8s.io/group-name`` (Spark ≥ 4.2, images built with
  VolcanoFeatureStep, or our SparkApplication stamp): the annotation is kept.
- Not annotated (Spark ≤ 4.1 official images): we do the feature step's work: annotate
  ``<appId>-podgroup``. Executors, including client-mode ones with no driver pod, are grouped by
  ``spark-app-selector`` under that same name, so they are never left without a group.
- Executors grouped at the source: a driver's arguments get ``--conf`` pairs (right after
  ``driver``, which the Spark image's entrypoint hands to spark-submit) that make Spark annotate
  its executors with the group, put them on our scheduler and label them ``vbridge.io/grouped``.
  The pod webhook's objectSelector leaves such pods out, so the apiserver does not call us for
  each executor.
- Timing: Spark writes the driver's conf ConfigMap only after the driver pod exists, so at the
  driver's admission the executor count and sizes are unknown. Every driver of ours is admitted
  with the scheduling gate ``vbridge.io/podgroup``; the reconciler builds (or, when Spark or the
  operator made it, completes) the PodGroup from the conf (``ctx.conf``) and the chosen template
  (``ctx.template``), then lifts the gate. A driver is never scheduled against a half-built group.

With ``ctx.conf`` known, ``translate`` also returns the PodGroup: the template's fields as the
user set them, with what it left out filled in (minMember 1, minResources = this driver's
requests + N executors by Spark's rules, queue by precedence).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import keys, patching, podgroups, podresources, quantity
from bridge.adapters import base, podview
from bridge.adapters.spark import conf as sparkconf
from bridge.adapters.spark import sizing

__all__ = ["SparkPodAdapter", "executor_sizes", "group_name"]


def group_name(app_id: str) -> str:
    return f"{app_id}-podgroup"


def _is_ours(pod: Mapping[str, Any], ctx: base.Context) -> bool:
    meta = pod.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    if (pod.get("spec") or {}).get("schedulerName") == ctx.scheduler_name:
        return True
    app = labels.get(keys.SPARK_OPERATOR_APP)
    return (
        labels.get(keys.SPARK_OPERATOR_LAUNCHED) == "true"
        and bool(app)
        and (annotations.get(keys.GROUP_NAME) == f"spark-{app}-pg")
    )


def _executor_stamps(name: str, scheduler_name: str) -> dict[str, str]:
    """Confs that make Spark create its executors as our webhook would leave them: grouped, on our
    scheduler (as the driver is), and labelled so that the webhook is not called for them."""
    return {
        f"spark.kubernetes.executor.annotation.{keys.GROUP_NAME}": name,
        "spark.kubernetes.executor.scheduler.name": scheduler_name,
        f"spark.kubernetes.executor.label.{keys.GROUPED_LABEL}": "true",
    }


def executor_sizes(conf: Mapping[str, str]) -> list[sizing.PodSize]:
    """N executors as Spark will size them from spark.properties."""

    def num(key: str) -> int | None:
        raw = conf.get(key)
        return int(raw) if raw not in (None, "") else None

    count = sizing.executor_count(
        instances=num("spark.executor.instances"),
        dynamic=conf.get("spark.dynamicAllocation.enabled") == "true",
        initial=num("spark.dynamicAllocation.initialExecutors"),
        minimum=num("spark.dynamicAllocation.minExecutors"),
    )
    factor = conf.get("spark.executor.memoryOverheadFactor") or conf.get("spark.kubernetes.memoryOverheadFactor")
    role = sizing.Role(
        memory=conf.get("spark.executor.memory"),
        overhead=conf.get("spark.executor.memoryOverhead"),
        overhead_factor=float(factor) if factor else None,
        min_overhead=conf.get("spark.executor.minMemoryOverhead"),
        cores=conf.get("spark.executor.cores"),
        core_request=conf.get("spark.kubernetes.executor.request.cores"),
        pyspark_memory=conf.get("spark.executor.pyspark.memory"),
        off_heap=conf.get("spark.memory.offHeap.size") if conf.get("spark.memory.offHeap.enabled") == "true" else None,
    )
    non_jvm = conf.get("spark.kubernetes.resource.type", "java").lower() in ("python", "r")
    return [sizing.pod_size(role, non_jvm=non_jvm, what="executor").times(count)] if count else []


class SparkPodAdapter:
    registration = base.Registration(
        name="spark.apache.org/pod",
        group="",
        versions=("v1",),
        kind="Pod",
        plural="pods",
        failure_policy="Ignore",
        why="pods are everyone's: a bridge outage must never block pod creation cluster-wide; an unstamped "
        "Spark pod still runs, only without its gang",
        object_selector=(keys.SPARK_ROLE,),
        done_when=f"has(object.metadata.annotations) && '{keys.GROUP_NAME}' in object.metadata.annotations"
        " && has(object.spec.schedulerName) && object.spec.schedulerName == '{scheduler}'"
        f" && object.metadata.labels['{keys.SPARK_ROLE}'] != 'driver'",
        view=podview.Pod,
    )

    def translate(self, obj: dict[str, Any], ctx: base.Context) -> base.Translation | None:
        role = sparkconf.role(obj)
        if role is None or not _is_ours(obj, ctx):
            return None
        meta = obj.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        desired = patching.assoc(obj, ("spec", "schedulerName"), ctx.scheduler_name)
        name = annotations.get(keys.GROUP_NAME)
        if name is None:
            name = group_name(sparkconf.app_id(obj))
            desired = patching.assoc(desired, ("metadata", "annotations"), {**annotations, keys.GROUP_NAME: name})
        if role == "driver":
            containers = sparkconf.with_driver_confs(
                desired["spec"].get("containers") or [], _executor_stamps(name, ctx.scheduler_name)
            )
            if containers is not None:
                desired = patching.assoc(desired, ("spec", "containers"), containers)
            gates = list(desired["spec"].get("schedulingGates") or [])
            if ctx.conf is None and not any(g.get("name") == keys.SPARK_GATE for g in gates):
                desired = patching.assoc(desired, ("spec", "schedulingGates"), [*gates, {"name": keys.SPARK_GATE}])
        group = None
        if role == "driver" and ctx.conf is not None and name == group_name(sparkconf.app_id(obj)):
            group = self._group(obj, name, ctx)
        return base.Translation(desired=desired, podgroup=group)

    def _group(self, pod: Mapping[str, Any], name: str, ctx: base.Context) -> dict[str, Any]:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        template = dict(ctx.template or {})
        tspec = dict(template.get("spec") or {})
        conf = ctx.conf or {}
        driver = podresources.pod_requests(spec, what="driver")
        executors = [
            {
                "cpu": quantity.parse(f"{s.cpu_milli}m"),
                "memory": quantity.parse(f"{s.memory_mib}Mi"),
                **{k: quantity.parse(v) for k, v in s.extended},
            }
            for s in executor_sizes(conf)
        ]
        queue = ctx.queue(field=tspec.get("queue"), annotations=meta.get("annotations"))
        group = podgroups.build(
            name=name,
            namespace=meta.get("namespace") or ctx.namespace,
            min_member=tspec.get("minMember", 1),
            queue=queue,
            min_resources=tspec.get("minResources") or podresources.total([driver, *executors]),
            min_task_member=tspec.get("minTaskMember"),
            priority_class=tspec.get("priorityClassName") or spec.get("priorityClassName"),
            labels=(template.get("metadata") or {}).get("labels"),
        )
        extra = {k: v for k, v in tspec.items() if k not in group["spec"]}
        group["spec"].update(extra)  # networkTopology, subGroupPolicy, …: passed through as Spark does
        if (template.get("metadata") or {}).get("annotations"):
            group["metadata"]["annotations"] = dict(template["metadata"]["annotations"])
        return group
