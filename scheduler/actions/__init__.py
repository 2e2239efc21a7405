"""Scheduler actions: each module has ``execute(session, tiers)`` and changes the session only through
statements (Allocate/Pipeline/Evict), committing or discarding them; none performs I/O.
``ungate`` is the native backend's last step (not a conf action: ``cycle`` runs it there).

``evicting`` is the victim-selection helper shared by ``preempt`` and ``reclaim``; ``registry``
lists the actions explicitly, by conf name (``cycle`` runs them, ``configure`` checks confs by it).
"""

__all__ = ["allocate", "backfill", "enqueue", "evicting", "preempt", "reclaim", "registry", "ungate"]
