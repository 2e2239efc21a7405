"""Reconcilers: the side effects admission must not have (``sideEffects: None``).

Contract: a reconciler holds the I/O only. What to write is decided by pure code in the kernel
(the adapters' ``podgroup``/``finished``, ``bridge.adapters.spark.driver``,
``bridge.adapters.vcjob``, ``bridge.vcjobcontrol``, ``bridge.podgroups.correction``); no module
here switches on a kind.

- ``wiring``: which reconcilers run, built from ``bridge.adapters.registry.ADAPTERS``;
- ``jobs``: the generic job reconciler, for every kind registered with ``generic_reconciler``:
  the job's PodGroup exists with the adapter's values and a controller ownerReference to the
  job, an operator's same-named group is corrected, and the group is deleted when the job ends;
- ``spark``: complete the PodGroup of a gated spark-submit driver from its conf ConfigMap and a
  server-side template, then lift the gate (or say on the pod why not); group client-mode
  executors;
- ``templates``: loading the server-side PodGroup templates (``podgroup_templates/``);
- ``vcjobs``: Volcano Jobs (``batch.volcano.sh/v1alpha1``): PodGroup, pods once the group left
  Pending (the gang, then waves), the svc/ssh/env plugins and the lifecycle policies (pure core
  in ``bridge.vcjobcontrol``, translation in ``bridge.adapters.vcjob``); its watches' cache
  ``vcjob_cache``, its paced pod calls ``vcjob_create``, its owned objects ``vcjob_owned``;
- ``commands``: vcctl's ``bus.volcano.sh`` Commands (job suspend/resume through the same
  annotation as ``vbridge job``, queue open/close with ``Closing`` until drained; pure part in
  ``bridge.bus``), deleted before they are carried out;
- ``native``: the native backend's ``Workload`` and ``PodGroup`` twins of every Volcano PodGroup
  (made by ``bridge.native.workloads``);
- ``certs``: the webhook's self-managed certificate (``--manage-certs``): the Secret and every
  webhook's ``caBundle``, kept by the leader;
- ``podgroup_io``: create or correct one PodGroup, shared by the reconcilers.
"""

__all__ = [
    "certs",
    "commands",
    "jobs",
    "native",
    "podgroup_io",
    "spark",
    "templates",
    "vcjob_cache",
    "vcjob_create",
    "vcjob_owned",
    "vcjobs",
    "wiring",
]
