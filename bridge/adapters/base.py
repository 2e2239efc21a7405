"""The adapter contract: registration record, context, admission result.

An adapter answers three questions about one kind, each a pure function of the object and the
cluster facts in a :class:`Context`:

- ``admit(obj, ctx) -> Admission | None``: the object as it should be admitted (stamped,
  defaulted, validated), with warnings. ``None``: not ours, admit unchanged. Raises
  ``errors.InvalidObjectError`` (``QueueError`` for queues) to deny. It is the webhook's hot
  path: it builds no PodGroup.
- ``podgroup(obj, ctx) -> dict | None``: the PodGroup the (admitted) object needs, without an
  ownerReference (its reconciler adds it). ``None``: the object needs no group of its own, or
  its group depends on more than the object (a spark-submit driver's conf ConfigMap: see
  ``bridge.adapters.spark.driver``; a Volcano Job's uid, unknown until it is created).
- ``finished(obj) -> bool``: the job is over, so its group gives its queue back.
- ``queue_of(obj, ctx) -> str | None``: the queue an admitted object is in (``None``: the kind
  names no queue), without checking it. On UPDATE, admission puts the old object's queue in
  ``Context.admitted_queue``: a queue left as it was is not judged again (it may have closed
  since), a queue changed by a field or an annotation is (``Context.queue``).

``Registration.generic_reconciler`` says whether ``vbridge.controllers.jobs`` keeps the kind's
PodGroup with ``podgroup`` and ``finished``; kinds with their own controller (Volcano Jobs,
spark-submit pods) and kinds whose group another kind makes (Kubeflow pods) leave it False.
``pod_registration`` is the record the pod adapters share: ``Ignore``, decoded as ``podview.Pod``.

``Registration.workload`` is a :class:`Workload` for a job kind someone runs (an operator, or
our Volcano Job controller): who creates its pods, the names ``vbridge explain`` takes for it,
the state ``vbridge list`` shows. ``registry.kinds`` merges every record of one kind (MPIJob has
two, one per version); the commands and the scheduler's owner sentence read those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from bridge import defaults, keys, queues
from bridge.adapters import podview

__all__ = [
    "HAS_GROUP",
    "Adapter",
    "Admission",
    "Context",
    "Obj",
    "PodAdapter",
    "Registration",
    "Workload",
    "pod_registration",
]

Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Workload:
    """What is said of a job kind beyond admission: the same for every record of the kind."""

    operator: str  # what creates its pods, as ``vbridge list``'s hint names it: "training-operator"
    # Why its PodGroup lacks pods, the scheduler's condition and ``vbridge explain``'s words:
    # "the Kubeflow training-operator has not created them".
    creates: str
    aliases: tuple[str, ...]  # the KIND of ``vbridge explain KIND/NAME``, lower case: ("tfjob", "tfjobs")
    # The name its controller gives its PodGroup (``{name}``: the job's), which ``vbridge explain``
    # looks for while nothing owns a group yet.
    group_name: str = "{name}"
    # ``vbridge list``'s STATE: the keys down to the operator's state string (SparkApplication's
    # ``status.applicationState.state``); empty: the latest true condition (Kubernetes' way).
    state: tuple[str, ...] = ()
    # True: a row of ``vbridge list``'s operator jobs (KIND, STATE); False: a table of its own
    # (Volcano Jobs, ``vbridge.commands.listing.VCJOB``).
    operator_table: bool = True


@dataclasses.dataclass(frozen=True)
class Registration:
    """What the webhook configuration, the chart and the reconcilers need to route a kind to its adapter."""

    name: str  # framework name, e.g. "kubeflow.org/tfjob"; also the webhook path
    group: str
    versions: tuple[str, ...]
    kind: str
    plural: str
    failure_policy: Literal["Fail", "Ignore"]
    why: str  # the reason for failure_policy, printed in the docs
    operations: tuple[str, ...] = ("CREATE",)
    scope: Literal["Namespaced", "Cluster"] = "Namespaced"
    object_selector: tuple[str, ...] = ()  # label keys that must exist on the object (pods only)
    # CEL, true when the object already needs nothing from us (an empty patch): the apiserver then
    # skips the call. ``{scheduler}`` stands for the configured scheduler name.
    done_when: str = ""
    # A TypedDict of the fields ``admit`` reads and writes: the webhook decodes only those (see
    # ``podview``). None: the whole object.
    view: Any = None
    # A TypedDict of the JSON types ``admit`` and ``queue_of`` rely on (``shapes``): admission
    # denies an object that does not fit, naming the member. None: no shape is checked.
    shape: Any = None
    # True: ``vbridge.controllers.jobs`` watches the kind and keeps ``podgroup(obj)`` existing
    # (owned by the object) until ``finished(obj)``.
    generic_reconciler: bool = False
    # True: ``admit`` may need a fact the watches have not shown yet (a queue made a moment ago),
    # which ``bridge.facts`` then reads from the apiserver: the webhook server runs it in a worker
    # thread, never on its event loop.
    reads: bool = False
    # A job kind's names, operator and state (:class:`Workload`); None: not a workload of its own
    # (pods, PodGroups, Queues, Commands).
    workload: Workload | None = None

    @property
    def path(self) -> str:
        return "/mutate/" + self.name.replace("/", "-").replace(".", "-")


# CEL: the object carries a PodGroup annotation (ours, or one made where the pod came from).
HAS_GROUP = f"has(object.metadata.annotations) && '{keys.GROUP_NAME}' in object.metadata.annotations"


def pod_registration(name: str, *, why: str, object_selector: tuple[str, ...], done_when: str) -> Registration:
    """A pod adapter's record: pods are admitted when the bridge is down (``Ignore``), decoded
    through ``podview.Pod``; ``why`` says what an unstamped pod of the family costs."""
    return Registration(
        name=name,
        group="",
        versions=("v1",),
        kind="Pod",
        plural="pods",
        failure_policy="Ignore",
        why=f"pods are everyone's: a bridge outage must never block pod creation cluster-wide; {why}",
        object_selector=object_selector,
        done_when=done_when,
        view=podview.Pod,
        shape=podview.Pod,  # the view is the shape: what a pod adapter reads, typed
    )


@dataclasses.dataclass(frozen=True)
class Context:
    """Cluster facts an adapter may consult, gathered by the caller. Pure data, no modes.

    ``queues`` is every queue by name, or ``None`` when the queues are not for this caller to
    judge: offline (``vbridge translate`` knows no cluster) and in the job reconciler (the object
    was admitted already; a queue closed since must not stop its group from being kept: the
    reconciler checks only ``queues.refusal`` itself). With ``None`` the queue is resolved by
    precedence but not checked. ``admitted_queue`` is the queue of the object's old version on
    UPDATE: resolving to it again is not checked. ``backend`` is the chosen backend, a parameter
    like the rest (never read from the environment). ``user`` is the request's ``userInfo`` and
    ``previous`` the old object on UPDATE, both set by admission for the one request (None
    elsewhere): a Command records its author from the first and is held to the second.
    """

    namespace: str
    namespace_labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    namespace_annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    queues: Mapping[str, queues.QueueFacts] | None = dataclasses.field(default_factory=dict)
    priorities: Mapping[str, int] = dataclasses.field(default_factory=dict)  # PriorityClass -> value
    scheduler_name: str = defaults.SCHEDULER_NAME
    admitted_queue: str | None = None
    # Who places the pods: "volcano" (stamped with ``scheduler_name``) or "native" (kube-scheduler:
    # pods join the native PodGroup and carry our queue gate, ``bridge.native.pods``). Resolved
    # already ("auto" never reaches an adapter).
    backend: Literal["volcano", "native"] = "volcano"
    user: Mapping[str, Any] | None = None
    previous: Mapping[str, Any] | None = None

    @property
    def native(self) -> bool:
        return self.backend == "native"

    def resolve(self, *, field: str | None, annotations: Mapping[str, str] | None) -> str:
        """The job's queue by precedence, unchecked."""
        return queues.resolve(
            field=field, job_annotations=annotations, namespace_annotations=self.namespace_annotations
        )

    def refusal(self, name: str) -> str | None:
        """Why this namespace may have no group in queue ``name`` (``queues.refusal``), whatever its state."""
        return None if self.queues is None else queues.refusal(name, namespace=self.namespace, queues=self.queues)

    def queue(self, *, field: str | None, annotations: Mapping[str, str] | None) -> str:
        """The job's queue by precedence; raises QueueError if it may not be used (when queues are known)."""
        name = self.resolve(field=field, annotations=annotations)
        if self.queues is not None and name != self.admitted_queue:
            queues.check(name, namespace=self.namespace, queues=self.queues)
        return name


@dataclasses.dataclass(frozen=True)
class Admission:
    desired: Obj  # the object as it should be admitted
    warnings: tuple[str, ...] = ()


class PodAdapter:
    """What every pod adapter answers alike (a base for them): its pods' PodGroup is made from
    their job, not from a pod; a pod is not reconciled as a job (``generic_reconciler`` is
    False); a pod is admitted on CREATE only and names its group, not a queue."""

    def podgroup(self, obj: Obj, ctx: Context) -> Obj | None:
        return None

    def finished(self, obj: Obj) -> bool:
        return False

    def queue_of(self, obj: Obj, ctx: Context) -> str | None:
        return None


class Adapter(Protocol):
    @property
    def registration(self) -> Registration: ...

    def admit(self, obj: Obj, ctx: Context) -> Admission | None: ...

    def podgroup(self, obj: Obj, ctx: Context) -> Obj | None: ...

    def finished(self, obj: Obj) -> bool: ...

    def queue_of(self, obj: Obj, ctx: Context) -> str | None: ...
