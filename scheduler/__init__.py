"""The bundled gang scheduler (Volcano semantics); its core is pure: ``(snapshot, config, now) -> plan``.

Laid out like Volcano's ``pkg/scheduler``, bottom to top:

- ``api``: the data: ``api.building.build(nodes=, pods=, podgroups=, queues=, priorityclasses=,
  scheduler_name=)`` turns API dicts (as the kube-apiserver returns them) into an immutable
  ``api.snapshot.Snapshot``; ``api.plan.Plan`` is a cycle's output;
- ``framework``: what actions and plugins share: the conf's types and format
  (``framework.config``), the session, statements, placement, tiers, verdicts;
- ``plugins`` and ``actions``: Volcano's, each listed explicitly in its ``registry``;
- ``configure.parse(conf_yaml, ...)`` reads ``volcano-scheduler.conf`` against the registries
  (the names it accepts are theirs);
- ``cycle.schedule(snapshot, config, now, on_commit=None) -> api.plan.Plan`` runs the configured
  actions; ``on_commit``, a sink, is also handed each committed statement's Allocates as it
  commits (they are final), so the shell can bind them while the cycle goes on;
- ``tools``: ``explain`` and ``simulate``, built on the same core;
- ``build``: whether the hot path runs compiled (mypyc, the image) or interpreted;
- ``errors``: what the core raises on purpose (a conf or an input it cannot use, never a
  scheduling outcome), below ``bridge.errors.BridgeError``;
- ``io``: the I/O shell (cache, binder, status writers, leader election, metrics, the loop).

A ``Plan`` holds ordered operations (``Allocate`` = bind, ``Pipeline`` = nominate, wait for
releasing resources, ``Evict`` = delete a victim) from committed Statements only, plus verdicts
to write: PodGroup phase, conditions and counts, Queue state and counts, and a pod event (and
PodScheduled condition) for every pod of ours that was not bound, with the reason. Nothing but
``io`` reads a clock, the environment, randomness or globals, or performs I/O.
"""

__all__ = ["actions", "api", "build", "configure", "cycle", "errors", "framework", "io", "plugins", "tools"]
