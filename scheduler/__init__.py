"""The bundled gang scheduler core (Volcano semantics), pure: ``(snapshot, config, now) -> plan``.

Contract for the I/O layer:

- ``building.build(nodes=, pods=, podgroups=, queues=, priorityclasses=, scheduler_name=)``
  turns API dicts (as the kube-apiserver returns them) into an immutable ``snapshot.Snapshot``;
- ``config.parse(conf_yaml, scheduler_name=, overcommit_factor=, spark_reservation_timeout=)``
  reads ``volcano-scheduler.conf`` (``config.default()`` gives Volcano's defaults);
- ``cycle.schedule(snapshot, config, now, on_commit=None) -> plan.Plan`` runs the configured
  actions; ``on_commit``, a sink, is also handed each committed statement's Allocates as it
  commits (they are final), so the shell can bind them while the cycle goes on.

A ``plan.Plan`` holds ordered operations (``Allocate`` = bind, ``Pipeline`` = nominate, wait
for releasing resources, ``Evict`` = delete a victim) from committed Statements only, plus
verdicts to write: PodGroup phase, conditions and counts, Queue state and counts, and a pod
event (and PodScheduled condition) for every pod of ours that was not bound, with the reason.
Nothing here reads a clock, the environment, randomness or globals, or performs I/O; the
cache, binder and status writers live around it (``io``), as do the two ``*_command`` modules.

Two tools reuse the core: ``explain.explain(snapshot, config, "ns/name")`` says why a PodGroup
waits (``vbridge explain podgroup``), and ``simulate.run(trace)`` replays a workload trace through
``cycle.schedule`` on a simulated clock (``vbridge simulate``).
"""

__all__ = [
    "actions",
    "building",
    "config",
    "cycle",
    "errors",
    "explain",
    "explain_command",
    "io",
    "placement",
    "plan",
    "plugins",
    "podspec",
    "ranking",
    "resources",
    "session",
    "simulate",
    "simulate_command",
    "snapshot",
    "spark",
    "statement",
    "tally",
    "verdicts",
]
