"""The Kubeflow family base: TFJob, PyTorchJob, MPIJob (v1 and v2beta1), XGBoostJob, PaddleJob
and JAXJob share all logic here.

Rules (training-operator's, without its gang flag): PodGroup named after the job; minMember =
Σ replicas of the gang roles, or ``runPolicy.schedulingPolicy.minAvailable``; minResources =
the requests of the first minMember pods, roles ordered by PriorityClass value (then by the
kind's role order); a ``minAvailable`` above the gang's replicas, or ``minResources`` that are
malformed or negative, are denied (the gang could never be complete), as is a replica template
with a quantity apimachinery would not keep as written (``bridge.validation.pod_template``); minTaskMember = how
many of those first pods each role contributes. Each
replica template is stamped with schedulerName, ``scheduling.k8s.io/group-name`` and
``volcano.sh/task-spec``, so no operator flag is needed, and labelled ``vbridge.io/grouped`` so
that the pod webhook is not called for its pods. ``admit`` validates and stamps only (the
webhook's fast path); ``podgroup`` computes the group for the reconciler. A job is finished
once a Succeeded or Failed condition is true. ``registration`` makes each kind's record: the
same failure policy, for the same reason, and the generic reconciler; its ``base.Workload``
(``workload``) names the training-operator and the kind's singular and plural, unless given.
``known_roles`` denies a replica type the kind's operator does not know (for the kinds whose own
webhook refuses one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bridge import errors, keys, patching, podgroups, podresources, validation
from bridge.adapters import base, shapes, stamping

__all__ = ["KubeflowAdapter", "known_roles", "registration", "workload"]


def workload(kind: str, plural: str) -> base.Workload:
    """A kind the training-operator runs: ``vbridge explain`` takes its singular and plural."""
    return base.Workload(
        operator="training-operator",
        creates="the Kubeflow training-operator has not created them",
        aliases=(kind.lower(), plural),
    )


def registration(
    name: str, kind: str, plural: str, version: str = "v1", *, runs: base.Workload | None = None
) -> base.Registration:
    """A Kubeflow job kind's record: denied when it cannot be stamped, its group kept by the
    generic reconciler; ``runs``: its workload, when the training-operator is not its only one."""
    return base.Registration(
        name=name,
        group="kubeflow.org",
        versions=(version,),
        kind=kind,
        plural=plural,
        failure_policy="Fail",
        why=f"an unstamped {kind} would start piecemeal; denying is safer than a silent no-gang",
        operations=("CREATE", "UPDATE"),
        generic_reconciler=True,
        shape=shapes.KubeflowJob,
        workload=runs or workload(kind, plural),
    )


def known_roles(adapter: KubeflowAdapter, spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The job's replica specs, once every replica type is one of ``adapter.roles`` (the
    operator's validating webhook refuses any other, spelt exactly so); another is denied."""
    specs: Mapping[str, Any] = spec.get(adapter.replica_field) or {}
    unknown = sorted(set(specs) - set(adapter.roles))
    if unknown:
        kind = adapter.registration.kind
        raise errors.InvalidObjectError(
            f"spec.{adapter.replica_field}.{unknown[0]}: a {kind} has no replica type {unknown[0]!r}; "
            f"its replica types are {', '.join(adapter.roles)} (the training-operator refuses any other)"
        )
    return specs


class KubeflowAdapter:
    registration: ClassVar[base.Registration]
    replica_field: ClassVar[str]
    roles: ClassVar[tuple[str, ...]]  # the kind's role order, used to break priority ties

    # -- hooks a kind may override -------------------------------------------------------------

    def gang_roles(self, spec: Mapping[str, Any], replicas: Mapping[str, int]) -> list[str]:
        """Roles whose pods make up the gang."""
        return list(replicas)

    def default_min_member(self, spec: Mapping[str, Any], replicas: Mapping[str, int]) -> int:
        return sum(replicas[r] for r in self.gang_roles(spec, replicas))

    def validate_spec(self, spec: Mapping[str, Any]) -> None:
        """Raise InvalidObjectError for a kind's own field its operator would refuse (none here)."""

    # -- shared logic -----------------------------------------------------------------------------

    def _replicas(self, specs: Mapping[str, Any]) -> dict[str, int]:
        out: dict[str, int] = {}
        for role, rs in specs.items():
            if not isinstance(rs, Mapping):
                raise errors.InvalidObjectError(f"{self.replica_field}.{role} must be an object")
            count = rs.get("replicas", 1)
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise errors.InvalidObjectError(
                    f"{self.replica_field}.{role}.replicas must be a non-negative integer, got {count!r}"
                )
            out[role] = count
        return out

    def _order(self, roles: list[str], specs: Mapping[str, Any], ctx: base.Context) -> list[str]:
        def rank(role: str) -> tuple[int, int, str]:
            pc = ((specs[role].get("template") or {}).get("spec") or {}).get("priorityClassName", "")
            known = self.roles.index(role) if role in self.roles else len(self.roles)
            return (-ctx.priorities.get(pc, 0), known, role)

        return sorted(roles, key=rank)

    def _validated(self, obj: Mapping[str, Any]) -> tuple[Mapping[str, Any], dict[str, int], int] | None:
        """The replica specs, replicas per role and minMember; None when the job opted out."""
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        specs = spec.get(self.replica_field)
        if not isinstance(specs, Mapping) or not specs:
            raise errors.InvalidObjectError(f"{self.registration.kind} needs spec.{self.replica_field} with roles")
        for role, rs in specs.items():  # an opted-out job's pods reach the apiserver all the same
            if isinstance(rs, Mapping):
                validation.pod_template(rs.get("template"), f"spec.{self.replica_field}.{role}.template")
        if (meta.get("labels") or {}).get(keys.OPT_IN_LABEL) == "disabled":
            return None
        replicas = self._replicas(specs)
        self.validate_spec(spec)
        policy = self._policy(obj)
        min_member = policy.get("minAvailable", self.default_min_member(spec, replicas))
        if not isinstance(min_member, int) or isinstance(min_member, bool) or min_member < 0:
            raise errors.InvalidObjectError(
                f"schedulingPolicy.minAvailable must be a non-negative integer, got {min_member!r}"
            )
        gang = sum(replicas[r] for r in self.gang_roles(spec, replicas))
        if "minAvailable" in policy and min_member > gang:
            raise errors.InvalidObjectError(
                f"schedulingPolicy.minAvailable {min_member} is greater than the job's replicas ({gang}): "
                "the gang could never be complete"
            )
        validation.resource_list(policy.get("minResources"), "schedulingPolicy.minResources")
        return specs, replicas, min_member

    @staticmethod
    def _policy(obj: Mapping[str, Any]) -> Mapping[str, Any]:
        return ((obj.get("spec") or {}).get("runPolicy") or {}).get("schedulingPolicy") or {}

    def _queue(self, obj: Mapping[str, Any], ctx: base.Context) -> str:
        meta = obj.get("metadata") or {}
        return ctx.queue(field=self._policy(obj).get("queue"), annotations=meta.get("annotations"))

    def queue_of(self, obj: dict[str, Any], ctx: base.Context) -> str | None:
        meta = obj.get("metadata") or {}
        return ctx.resolve(field=self._policy(obj).get("queue"), annotations=meta.get("annotations"))

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        checked = self._validated(obj)
        if checked is None:
            return None
        specs = checked[0]
        name = (obj.get("metadata") or {}).get("name") or ""
        self._queue(obj, ctx)
        stamped = {
            role: {**rs, "template": stamping.template(rs.get("template"), name, ctx, task=role.lower())}
            for role, rs in specs.items()
        }
        return base.Admission(desired=patching.assoc(obj, ("spec", self.replica_field), stamped))

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        checked = self._validated(obj)
        if checked is None:
            return None
        specs, replicas, min_member = checked
        meta, policy = obj.get("metadata") or {}, self._policy(obj)
        ordered = self._order(self.gang_roles(obj.get("spec") or {}, replicas), specs, ctx)
        taken: dict[str, int] = {}
        left = min_member
        for role in ordered:
            n = min(left, replicas[role])
            if n:
                taken[role] = n
            left -= n
        resources = policy.get("minResources")
        if resources is None:
            resources = podresources.total(
                podresources.scale(
                    podresources.pod_requests(((specs[r].get("template") or {}).get("spec") or {}), what=r), n
                )
                for r, n in taken.items()
            )
        priority = policy.get("priorityClass") or next(
            (
                pc
                for r in ordered
                if (pc := ((specs[r].get("template") or {}).get("spec") or {}).get("priorityClassName"))
            ),
            None,
        )
        return podgroups.build(
            name=meta.get("name") or "",
            namespace=meta.get("namespace") or ctx.namespace,
            min_member=min_member,
            queue=self._queue(obj, ctx),
            min_resources=resources,
            min_task_member={r.lower(): n for r, n in taken.items()},
            priority_class=priority,
        )

    def finished(self, obj: dict[str, Any]) -> bool:
        """A true Succeeded or Failed condition, as the operators set them."""
        conditions = (obj.get("status") or {}).get("conditions") or []
        return any(c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True" for c in conditions)
