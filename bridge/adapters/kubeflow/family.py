"""The Kubeflow family base: TFJob, PyTorchJob, MPIJob (v1 and v2beta1) share all logic here.

Rules (training-operator's, without its gang flag): PodGroup named after the job; minMember =
Σ replicas of the gang roles, or ``runPolicy.schedulingPolicy.minAvailable``; minResources =
the requests of the first minMember pods, roles ordered by PriorityClass value (then by the
kind's role order); minTaskMember = how many of those first pods each role contributes. Each
replica template is stamped with schedulerName, ``scheduling.k8s.io/group-name`` and
``volcano.sh/task-spec``, so no operator flag is needed, and labelled ``vbridge.io/grouped`` so
that the pod webhook is not called for its pods. At admission (``ctx.want_podgroup`` false) the
job is validated and stamped; the PodGroup is left to the reconciler.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bridge import errors, keys, patching, podgroups, podresources
from bridge.adapters import base

__all__ = ["KubeflowAdapter"]


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

    @staticmethod
    def _stamp(rs: dict[str, Any], job: str, role: str, scheduler_name: str) -> dict[str, Any]:
        """A replica spec whose pod template carries the group, the task and our scheduler."""
        template = rs.get("template")
        template = template if isinstance(template, dict) else {}
        meta, spec = template.get("metadata"), template.get("spec")
        meta = meta if isinstance(meta, dict) else {}
        annotations = {**(meta.get("annotations") or {}), keys.GROUP_NAME: job, keys.TASK_SPEC: role.lower()}
        labels = {**(meta.get("labels") or {}), keys.GROUPED_LABEL: "true"}  # so the pod webhook skips its pods
        out = {**template, "metadata": {**meta, "labels": labels, "annotations": annotations}}
        if isinstance(spec, dict) and spec.get("schedulerName") not in (None, "", "default-scheduler"):
            return {**rs, "template": out}  # the user chose a scheduler: theirs wins
        out["spec"] = {**(spec if isinstance(spec, dict) else {}), "schedulerName": scheduler_name}
        return {**rs, "template": out}

    def translate(self, obj: dict[str, Any], ctx: base.Context) -> base.Translation | None:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        specs = spec.get(self.replica_field)
        if not isinstance(specs, Mapping) or not specs:
            raise errors.InvalidObjectError(f"{self.registration.kind} needs spec.{self.replica_field} with roles")
        if (meta.get("labels") or {}).get(keys.OPT_IN_LABEL) == "disabled":
            return None
        replicas = self._replicas(specs)
        policy = (spec.get("runPolicy") or {}).get("schedulingPolicy") or {}
        min_member = policy.get("minAvailable", self.default_min_member(spec, replicas))
        if not isinstance(min_member, int) or min_member < 0:
            raise errors.InvalidObjectError(
                f"schedulingPolicy.minAvailable must be a non-negative integer, got {min_member!r}"
            )
        name = meta.get("name") or ""
        queue = ctx.queue(field=policy.get("queue"), annotations=meta.get("annotations"))
        stamped = {role: self._stamp(rs, name, role, ctx.scheduler_name) for role, rs in specs.items()}
        desired = patching.assoc(obj, ("spec", self.replica_field), stamped)
        if not ctx.want_podgroup:  # admission: the reconciler builds the group from the admitted job
            return base.Translation(desired=desired, podgroup=None)

        ordered = self._order(self.gang_roles(spec, replicas), specs, ctx)
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
        group = podgroups.build(
            name=name,
            namespace=meta.get("namespace") or ctx.namespace,
            min_member=min_member,
            queue=queue,
            min_resources=resources,
            min_task_member={r.lower(): n for r, n in taken.items()},
            priority_class=priority,
        )
        return base.Translation(desired=desired, podgroup=group)
