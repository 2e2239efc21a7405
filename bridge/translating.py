"""Offline translation for ``vbridge translate``: what the bridge would do to a manifest. Pure.

The manifest is converted to today's API, admitted (``adapter.admit``) and its PodGroup built
from the admitted object (``adapter.podgroup``), as admission and the reconciler would. Offline
there are no queues to consult: the context says so with ``queues=None``, so the queue is
resolved but not checked.

- A group that needs the object's uid (a Volcano Job's ``<job>-<uid>``) is built on the object
  given :data:`PLACEHOLDER_UID`, and a note says so.
- A hand-written PodGroup is reported as such: the scheduler uses it as it is.
- A spark-submit script (``translate_script``) becomes the driver pod spark-submit would create
  (``bridge.adapters.spark.submit``), admitted as the pod webhook does, with the group the
  reconciler builds from the command line's conf (``bridge.adapters.spark.driver``).
- An object nothing here gang-schedules has ``skipped``: one line saying why.

Nothing raises on a malformed object: every failure is ``Outcome.error``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bridge import convert, defaults, errors, keys, patching
from bridge.adapters import base, registry
from bridge.adapters.spark import conf as sparkconf
from bridge.adapters.spark import driver, submit, templates

__all__ = ["PLACEHOLDER_UID", "PODGROUP_NOTE", "Outcome", "translate", "translate_script"]

PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"
PODGROUP_NOTE = "already a PodGroup: the scheduler uses it as is"
_PODGROUP_GROUP = defaults.PODGROUP_API.split("/")[0]
# What an adapter raises on a field of the wrong type (a list for a mapping, …): a denial here.
_MALFORMED = (AttributeError, TypeError, KeyError, ValueError, IndexError, RecursionError)


@dataclasses.dataclass(frozen=True)
class Outcome:
    source: str  # "apiVersion kind name"
    converted: dict[str, Any] | None  # the object in today's API, when it was an old one
    desired: dict[str, Any] | None  # the object as admitted (None: not ours, unchanged)
    podgroup: dict[str, Any] | None  # the group the bridge makes for it
    patch: list[dict[str, Any]]
    notes: tuple[str, ...]
    error: str | None = None
    skipped: str | None = None  # why nothing here is gang-scheduled (the opt-in hint)
    current: dict[str, Any] | None = None  # what a user applies: today's API, otherwise unchanged
    line: int | None = None  # scripts: the line the spark-submit command line starts on


def _context(obj: dict[str, Any], namespace_labels: dict[str, str] | None, scheduler_name: str) -> base.Context:
    meta = obj.get("metadata") or {}
    return base.Context(
        namespace=str(meta.get("namespace") or "default"),
        namespace_labels=namespace_labels or {},
        scheduler_name=scheduler_name,
        queues=None,
    )


def translate(
    obj: dict[str, Any],
    *,
    namespace_labels: dict[str, str] | None = None,
    scheduler_name: str = defaults.SCHEDULER_NAME,
    spark_conf: dict[str, str] | None = None,
) -> Outcome:
    """``spark_conf``: a spark-submit driver's conf (its spark.properties), when it is known."""
    api_version, kind, meta = obj.get("apiVersion"), obj.get("kind"), obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    source = " ".join(str(part or "?") for part in (api_version, kind, name))
    if not (isinstance(api_version, str) and isinstance(kind, str) and api_version and kind):
        return Outcome(source, None, None, None, [], (), error="not a Kubernetes object: no apiVersion and kind")
    if meta is not None and not isinstance(meta, dict):
        return Outcome(source, None, None, None, [], (), error=f"metadata must be a mapping, not {type(meta).__name__}")
    if kind == "PodGroup" and api_version.split("/")[0] == _PODGROUP_GROUP:
        return Outcome(source, None, None, None, [], (PODGROUP_NOTE,), current=obj)
    try:
        current, notes = convert.to_current(obj)
    except errors.InvalidObjectError as exc:
        return Outcome(source, None, None, None, [], (), error=str(exc))
    except _MALFORMED as exc:
        return Outcome(source, None, None, None, [], (), error=_malformed(kind, exc))
    converted = current if current is not obj else None
    ctx = _context(current, namespace_labels, scheduler_name)
    try:
        return _admitted(source, current, converted, tuple(notes), ctx, spark_conf)
    except errors.InvalidObjectError as exc:
        return Outcome(source, converted, None, None, [], tuple(notes), error=str(exc), current=current)
    except _MALFORMED as exc:
        return Outcome(source, converted, None, None, [], tuple(notes), error=_malformed(kind, exc), current=current)


def _malformed(kind: str, exc: BaseException) -> str:
    detail = "nested too deeply" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"
    return f"this {kind} has a field of the wrong type or shape ({detail})"


def _admitted(
    source: str,
    current: dict[str, Any],
    converted: dict[str, Any] | None,
    notes: tuple[str, ...],
    ctx: base.Context,
    spark_conf: dict[str, str] | None,
) -> Outcome:
    adapters = registry.for_object(current)
    if not adapters:
        return Outcome(source, converted, None, None, [], notes, skipped=_not_handled(current), current=current)
    for adapter in adapters:
        admitted = adapter.admit(current, ctx)
        if admitted is None:
            continue
        desired = admitted.desired
        group, more = _podgroup(adapter, desired, ctx, spark_conf)
        patch = patching.diff(current, desired)
        return Outcome(source, converted, desired, group, patch, (*notes, *admitted.warnings, *more), current=current)
    return Outcome(source, converted, None, None, [], notes, skipped=_why_skipped(current, ctx), current=current)


def _podgroup(
    adapter: base.Adapter, desired: dict[str, Any], ctx: base.Context, spark_conf: dict[str, str] | None
) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """The group and what the reader should know about it."""
    if driver.gated_driver(desired):
        if spark_conf is None:
            return None, ("a spark-submit driver: its PodGroup is built from its conf ConfigMap once it exists",)
        return driver.podgroup(desired, ctx, conf=spark_conf, template=None), ()
    meta = desired.get("metadata") or {}
    placeholder = not meta.get("uid")
    # Offline, as the controller sees it once the object exists: in its namespace, with a uid.
    probe = patching.assoc(desired, ("metadata",), {"namespace": ctx.namespace, "uid": PLACEHOLDER_UID, **meta})
    group = adapter.podgroup(probe, ctx)
    if group is None:
        return None, (("a pod of a job: it joins its job's PodGroup",) if desired.get("kind") == "Pod" else ())
    if not placeholder or PLACEHOLDER_UID not in str(group.get("metadata")):
        return group, ()
    kind = desired.get("kind")
    return group, (
        f"the PodGroup is named after the {kind}'s uid, given when it is created: shown with the placeholder uid "
        f"{PLACEHOLDER_UID}; the controller makes it and owns it by the {kind}",
    )


def _not_handled(obj: dict[str, Any]) -> str:
    kind = obj.get("kind")
    versions = sorted({v for a in registry.ADAPTERS if a.registration.kind == kind for v in a.registration.versions})
    if versions and kind != "Pod":
        return f"a {obj.get('apiVersion')} {kind}: volcano-bridge handles {kind} {', '.join(versions)} only"
    return f"a {kind}: not a kind volcano-bridge handles"


def _why_skipped(obj: dict[str, Any], ctx: base.Context) -> str:
    """One line: why ``obj``, of a kind we handle, is admitted unchanged."""
    kind = str(obj.get("kind"))
    raw_spec = obj.get("spec")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if kind == "SparkApplication":
        scheduler = spec.get("batchScheduler")
        if spec.get("mode") == "in-cluster-client":
            return "a SparkApplication in in-cluster-client mode: no driver pod to gang with"
        if scheduler not in (None, "", "volcano"):
            return f"a SparkApplication for batchScheduler {scheduler}, not volcano"
        return (
            "a SparkApplication without batchScheduler volcano in a namespace not labelled "
            f"{keys.OPT_IN_LABEL}=enabled (see --namespace-label)"
        )
    if isinstance(labels, dict) and labels.get(keys.OPT_IN_LABEL) == "disabled":
        return f"a {kind} labelled {keys.OPT_IN_LABEL}=disabled"
    if kind == "Pod":
        if sparkconf.role(obj):
            return f"a spark-submit pod not on scheduler {ctx.scheduler_name} (spark.kubernetes.scheduler.name)"
        return f"a Pod of no Spark or Kubeflow job on scheduler {ctx.scheduler_name}, or one already grouped"
    return f"a {kind} the bridge admits unchanged"


def translate_script(
    text: str, *, namespace_labels: dict[str, str] | None = None, scheduler_name: str = defaults.SCHEDULER_NAME
) -> list[Outcome]:
    """Each spark-submit command line of a shell script, as the driver pod it makes (cluster mode)."""
    found = submit.parse(text)
    if not found:
        return [Outcome("shell script", None, None, None, [], (), error="no spark-submit command line in it")]
    return [_submission(s, namespace_labels, scheduler_name) for s in found]


def _submission(
    sub: submit.Submission | submit.Unreadable, namespace_labels: dict[str, str] | None, scheduler_name: str
) -> Outcome:
    if isinstance(sub, submit.Unreadable):
        return Outcome("spark-submit", None, None, None, [], (), error=sub.reason, line=sub.line)
    source = f"spark-submit {sub.conf.get('spark.app.name') or sub.main_class or sub.resource or '?'}"
    if not sub.on_kubernetes:
        master = sub.conf.get("spark.master")
        why = f"a spark-submit to {master}, not to Kubernetes (k8s://…)" if master else "a spark-submit, no --master"
        return Outcome(source, None, None, None, [], sub.notes, skipped=why, line=sub.line)
    if not sub.cluster_mode:
        scheduler = sub.conf.get("spark.kubernetes.executor.scheduler.name") or sub.conf.get(
            "spark.kubernetes.scheduler.name"
        )
        if scheduler != scheduler_name:
            why = f"a client-mode spark-submit whose executors are not on scheduler {scheduler_name}"
            return Outcome(source, None, None, None, [], sub.notes, skipped=why, line=sub.line)
        note = "client mode: the driver runs where spark-submit does; the bridge groups its executors as they come"
        return Outcome(source, None, None, None, [], (*sub.notes, note), line=sub.line)
    try:
        pod = submit.driver_pod(sub)
    except errors.InvalidObjectError as exc:
        return Outcome(source, None, None, None, [], sub.notes, error=str(exc), line=sub.line)
    out = translate(pod, namespace_labels=namespace_labels, scheduler_name=scheduler_name, spark_conf=sub.conf)
    notes = [f"the driver pod spark-submit creates; its app id is chosen at launch: shown as {submit.APP_ID}"]
    if submit.VOLCANO_STEP in sub.conf.get("spark.kubernetes.driver.pod.featureSteps", ""):
        notes.append("Spark's VolcanoFeatureStep creates the PodGroup; the reconciler completes it as shown")
    if sub.conf.get(sparkconf.TEMPLATE_FILE):
        name = templates.stem(sub.conf[sparkconf.TEMPLATE_FILE])
        notes.append(f"a server-side PodGroup template {name!r}, if the cluster has one, adds its fields (not shown)")
    return dataclasses.replace(out, source=source, notes=(*sub.notes, *notes, *out.notes), current=None, line=sub.line)
