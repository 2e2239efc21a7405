"""The scheduler's I/O shell: watches in, binds and status out, around the pure core.

Contract:

- ``cache.Cache`` holds what the watches (``bridge.k8s.watching.follow``) report for nodes,
  pods, PodGroups, Queues and PriorityClasses, plus pods the binder *assumed* (bound by us, not
  yet seen bound), and hands ``building.build`` consistent API-dict lists; pods and nodes are
  held as far as ``reads`` describes them (what the scheduler reads), nothing more;
- ``binder.Binder`` carries out a plan's operations (bind, nominate, evict) against the
  apiserver, treating a 409 on ``pods/binding`` by reading the pod, and forgets failed binds;
- ``status.StatusWriter`` writes verdicts (PodGroup, Queue, pod condition, Events), only what
  changed since its last write, with ``resourceVersion`` preconditions, off the cycle's path:
  a cycle queues them (``submit``, no I/O) and the writer's own task sends them, one queued
  entry per object (``pacing.Coalescing``) at a rate of their own (``pacing.Bucket``); the
  bodies it sends are ``bodies``' (pure);
- ``parking.Parking`` keeps the gangs a cycle found stuck (``Plan.stuck``) out of the next
  cycles until something they could use changes (``cache.Cache.generation``, their own new
  pods) or their backoff ends; the loop hands them to the core as ``SchedulerConfig.parked``;
- ``loop.Scheduler(api, conf).run()`` is the whole scheduler: cache, optional leader election
  (``bridge.k8s.lease.Elector``), a cycle every ``period`` seconds or promptly after relevant events, and
  ``metrics`` (Prometheus text on ``/metrics``, ``/healthz``). The core runs in a worker thread;
  its committed binds go out as it commits them, evictions and nominations once it is done; a
  cycle ends with its binds, never waiting for status writes;

Only this package performs I/O for the scheduler, always through ``bridge.k8s.client.Client``;
the clock is read here (``loop``), never in the core.
"""

__all__ = ["binder", "bodies", "cache", "loop", "metrics", "pacing", "parking", "reads", "status"]
