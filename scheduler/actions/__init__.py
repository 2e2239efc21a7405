"""Scheduler actions: each module has ``execute(session, tiers)`` and changes the session only through
statements (Allocate/Pipeline/Evict), committing or discarding them; none performs I/O.
Volcano's: ``enqueue`` (admit Pending groups the cluster can hold), ``allocate`` (place whole
gangs), ``backfill`` (BestEffort tasks), ``preempt`` and ``reclaim`` (per pod), ``gangpreempt``
and ``gangreclaim`` (per victim job).
``ungate`` is the native backend's last step (not a conf action: ``cycle`` runs it there);
``nativereclaim`` is that backend's reclaim (whole groups, at admission: ``registry.NATIVE``).

``evicting`` is the per-pod victim selection shared by ``preempt`` and ``reclaim``;
``gangevicting`` (with ``bundles``, the victims per job) the gang-level one shared by
``gangpreempt`` and ``gangreclaim``; ``registry`` lists the actions explicitly, by conf name
(``cycle`` runs them, ``configure`` checks confs by it).
"""

__all__ = [
    "allocate",
    "backfill",
    "bundles",
    "enqueue",
    "evicting",
    "gangevicting",
    "gangpreempt",
    "gangreclaim",
    "nativereclaim",
    "preempt",
    "reclaim",
    "registry",
    "ungate",
]
