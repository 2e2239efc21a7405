"""The adapter contract: registration record, context, translation result."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from bridge import defaults, queues

__all__ = ["Adapter", "Context", "Registration", "Translation"]

Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Registration:
    """What the webhook configuration and the chart need to route a kind to its adapter."""

    name: str  # framework name, e.g. "kubeflow.org/tfjob"; also the webhook path
    group: str
    versions: tuple[str, ...]
    kind: str
    plural: str
    failure_policy: Literal["Fail", "Ignore"]
    why: str  # the reason for failure_policy, printed in the docs
    operations: tuple[str, ...] = ("CREATE",)
    object_selector: tuple[str, ...] = ()  # label keys that must exist on the object (pods only)
    # CEL, true when the object already needs nothing from us (an empty patch): the apiserver then
    # skips the call. ``{scheduler}`` stands for the configured scheduler name.
    done_when: str = ""
    # A TypedDict of the fields ``translate`` reads and writes at admission: the webhook decodes
    # only those (see ``podview``). None: the whole object.
    view: Any = None

    @property
    def path(self) -> str:
        return "/mutate/" + self.name.replace("/", "-").replace(".", "-")


@dataclasses.dataclass(frozen=True)
class Context:
    """Cluster facts an adapter may consult, gathered by the caller. Pure data."""

    namespace: str
    namespace_labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    namespace_annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    queues: Mapping[str, queues.QueueFacts] = dataclasses.field(default_factory=dict)
    priorities: Mapping[str, int] = dataclasses.field(default_factory=dict)  # PriorityClass -> value
    scheduler_name: str = defaults.SCHEDULER_NAME
    check_queues: bool = True  # False for offline `vbridge translate`
    conf: Mapping[str, str] | None = None  # a spark-submit driver's spark.properties, once known
    template: Mapping[str, Any] | None = None  # the chosen server-side PodGroup template, if any
    # Admission only needs the desired object: an adapter may then skip work that only the PodGroup
    # needs (and that the apiserver validates anyway, such as template quantities). Reconcilers and
    # `vbridge translate` keep the default.
    want_podgroup: bool = True

    def queue(self, *, field: str | None, annotations: Mapping[str, str] | None) -> str:
        """The job's queue by precedence; raises QueueError if it may not be used."""
        name = queues.resolve(
            field=field, job_annotations=annotations, namespace_annotations=self.namespace_annotations
        )
        if self.check_queues:
            queues.check(name, namespace=self.namespace, queues=self.queues)
        return name


@dataclasses.dataclass(frozen=True)
class Translation:
    desired: Obj  # the object as it should be admitted
    podgroup: Obj | None  # the PodGroup the object needs (no ownerReference: the reconciler adds it)
    warnings: tuple[str, ...] = ()


class Adapter(Protocol):
    @property
    def registration(self) -> Registration: ...

    def translate(self, obj: Obj, ctx: Context) -> Translation | None: ...
