"""Reconcilers: the side effects admission must not have (``sideEffects: None``).

- ``jobs``: for every job kind in the adapter registry, make the job's PodGroup exist with the
  adapter's values and a controller ownerReference to the job (so it goes when the job goes),
  correct a same-named PodGroup an operator made (our values win; the operators only re-sync
  minMember, which we set alike, so the two never fight), and delete it when the job finishes.
- ``spark``: complete the PodGroup of a gated spark-submit driver from its conf ConfigMap and a
  server-side template, then lift the gate; give client-mode executors a group.
- ``templates``: the server-side PodGroup templates (``podgroup_templates/``).
- ``vcjobs``: Volcano Jobs (``batch.volcano.sh/v1alpha1``): PodGroup, pods once the group left
  Pending, the svc/ssh/env plugins and the lifecycle policies (pure core in ``bridge.vcjob``).
- ``podgroup_io``: create or correct one PodGroup, shared by the reconcilers.
- ``events``: Kubernetes Events, so a user sees what the bridge did or why it could not.

Each reconciler runs the same pure adapter as admission; only the I/O lives here.
"""

__all__ = ["events", "jobs", "podgroup_io", "spark", "templates", "vcjobs"]
