"""Scheduler actions: each module has ``execute(session)`` and changes the session only through
statements (Allocate/Pipeline/Evict), committing or discarding them; none performs I/O.

``evicting`` is the victim-selection helper shared by ``preempt`` and ``reclaim``.
"""

__all__ = ["allocate", "backfill", "enqueue", "evicting", "preempt", "reclaim"]
