"""spark-submit pods (labels ``spark-app-selector`` and ``spark-role``).

Ours when the pod asks for our scheduler (``spark.kubernetes.scheduler.name``), or when the
spark-operator launched it for an application we stamped.

- Already annotated with ``scheduling.k8s.io/group-name`` (Spark ≥ 4.2, images built with
  VolcanoFeatureStep, or our SparkApplication stamp): the annotation is kept.
- Not annotated (Spark ≤ 4.1 official images): we do the feature step's work: annotate
  ``<appId>-podgroup``. Executors, including client-mode ones with no driver pod, are grouped by
  ``spark-app-selector`` under that same name, so they are never left without a group. Such an
  executor is denied when the queue its annotation (or namespace) names refuses its namespace.
- Executors grouped at the source: a driver's arguments get ``--conf`` pairs (right after
  ``driver``, which the Spark image's entrypoint hands to spark-submit) that make Spark annotate
  its executors with the group, put them on our scheduler and label them ``vbridge.io/grouped``.
  The pod webhook's objectSelector leaves such pods out, so the apiserver does not call us for
  each executor.
- Timing: Spark writes the driver's conf ConfigMap only after the driver pod exists, so at the
  driver's admission the executor count and sizes are unknown. Every driver of ours is admitted
  with the scheduling gate ``vbridge.io/podgroup``; the reconciler builds (or, when Spark or the
  operator made it, completes) the PodGroup from the conf and the chosen template
  (``bridge.adapters.spark.driver``), then lifts the gate. A driver is never scheduled against a
  half-built group.

Native backend (``Context.backend``): every pod of ours also gets ``schedulingGroup`` (the group
above), the queue gate and kube-scheduler's name (``bridge.native.pods``); executors are not
labelled grouped, so each comes here for its stamp.

``podgroup`` is therefore ``None`` here: a driver's group is not a function of the pod alone.
Every pod sent here has its quantities held to what apimachinery keeps as written
(``bridge.validation.pod_spec``), ours or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import errors, keys, patching, validation
from bridge.adapters import base
from bridge.adapters.spark import application
from bridge.adapters.spark import conf as sparkconf
from bridge.native import pods as native_pods

__all__ = ["SparkPodAdapter", "executor_stamps", "group_name"]


def group_name(app_id: str) -> str:
    return f"{app_id}-podgroup"


def _is_ours(pod: Mapping[str, Any], ctx: base.Context) -> bool:
    meta = pod.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    spec = pod.get("spec") or {}
    if spec.get("schedulerName") == ctx.scheduler_name:
        return True
    if ctx.native and native_pods.stamped(spec):
        return False  # joined a native group already (a SparkApplication stamp, or admitted once)
    app = labels.get(keys.SPARK_OPERATOR_APP)
    return (
        labels.get(keys.SPARK_OPERATOR_LAUNCHED) == "true"
        and bool(app)
        and annotations.get(keys.GROUP_NAME) == application.group_name(str(app))
    )


def executor_stamps(name: str, ctx: base.Context) -> dict[str, str]:
    """Confs that make Spark create its executors as our webhook would leave them: grouped, on our
    scheduler (as the driver is), and labelled so that the webhook is not called for them. On the
    native backend the executors still name our scheduler and carry no label: Spark cannot write
    ``schedulingGroup``, so the webhook stamps each executor (``bridge.native.pods``)."""
    out = {
        f"spark.kubernetes.executor.annotation.{keys.GROUP_NAME}": name,
        "spark.kubernetes.executor.scheduler.name": ctx.scheduler_name,
    }
    if not ctx.native:
        out[f"spark.kubernetes.executor.label.{keys.GROUPED_LABEL}"] = "true"
    return out


class SparkPodAdapter(base.PodAdapter):
    """A driver's group is made by the Spark reconciler from its conf (``driver.podgroup``); an
    executor joins its driver's."""

    registration = base.pod_registration(
        "spark.apache.org/pod",
        why="an unstamped Spark pod still runs, only without its gang",
        object_selector=(keys.SPARK_ROLE,),
        done_when=base.HAS_GROUP + " && has(object.spec.schedulerName) && object.spec.schedulerName == '{scheduler}'"
        f" && object.metadata.labels['{keys.SPARK_ROLE}'] != 'driver'",
    )

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        validation.pod_spec(obj.get("spec"), "spec")
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
        if role == "executor" and name == group_name(sparkconf.app_id(obj)):
            # Client mode: the executors' group is ours to make, in the queue their annotation or
            # namespace names; a queue closed since still takes them, one that refuses the
            # namespace never does.
            refused = ctx.refusal(ctx.resolve(field=None, annotations=annotations))
            if refused is not None:
                raise errors.QueueError(refused)
        if role == "driver":
            containers = sparkconf.with_driver_confs(
                desired["spec"].get("containers") or [], executor_stamps(name, ctx)
            )
            if containers is not None:
                desired = patching.assoc(desired, ("spec", "containers"), containers)
            gates = list(desired["spec"].get("schedulingGates") or [])
            if not any(g.get("name") == keys.SPARK_GATE for g in gates):
                desired = patching.assoc(desired, ("spec", "schedulingGates"), [*gates, {"name": keys.SPARK_GATE}])
        if ctx.native:
            desired = patching.assoc(
                desired, ("spec",), native_pods.stamp(desired["spec"], name, ours=ctx.scheduler_name)
            )
        return base.Admission(desired=desired)
