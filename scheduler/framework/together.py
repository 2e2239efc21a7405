"""Gangs held in one topology domain by their own required pod affinity: which tasks qualify, and
the rows their next copies may take. Pure.

A task whose only pod terms are required pod affinity on one topology key K (say the zone)
that it matches itself is placed one at a time the long way (``Placer.place`` then
allocate, with its domain checks and scores over every row each time). Once every row that
both fits on idle and passes the domain checks lies in one domain z of K, the long way is
known in advance until the run leaves z:

- the affinity check passes in z and stays so (each copy placed adds to z's count), and every
  other row that passes it does not fit on idle and cannot come to (idle only shrinks on the
  rows that copies take); the anti-affinity terms other pods hold do not move (the copies hold
  only their affinity terms);
- the domain score (kube-scheduler's InterPodAffinity score, normalised over the feasible
  rows) is 0 on every feasible row if it is on the first look: the copies hold only their own
  affinity terms, whose counts are the same on every row of z; the terms other pods hold do
  not move, so a part that is the same on every feasible row stays so as rows drop out.

So the next copies each go to the best row by node score among ``within`` (z's rows that
passed the domain checks): ``Placer.place_within``, or several at once as ``place_many``
places them (``Placer.place_many_within``). The check that the score is 0 is made on
the first look (``Placer.together``); what keeps it 0 is the rule above.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.api import snapshot
from scheduler.framework import apart, topology

__all__ = ["Mask", "key", "within"]

Mask = npt.NDArray[np.bool_]


def key(tasks: list[snapshot.Task]) -> str | None:
    """The topology key K of the run's required affinity if the run qualifies (see above), else None."""
    terms = apart.own_terms(tasks, "affinity")
    keys = {t.topology_key for t in terms or ()}
    return keys.pop() if len(keys) == 1 else None


def within(topo: topology.Topology, k: str, feasible: Mask, ok: Mask) -> Mask | None:
    """The rows of the one domain of ``k`` that every ``feasible`` row is in, where ``ok``; None
    when the feasible rows are in several domains (or none, or some lack the key)."""
    ids, size = topo.ids(k)
    domains = ids[feasible]
    if not len(domains):
        return None
    z = domains[0]
    if z == size or not bool((domains == z).all()):
        return None
    result: Mask = (ids == z) & ok
    return result
