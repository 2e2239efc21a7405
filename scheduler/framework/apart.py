"""Gangs kept one pod per node: which tasks qualify, and their rows in one step. Pure.

A task whose only domain constraint is required pod anti-affinity on ``kubernetes.io/hostname``
against its own gang (every term's selector matches the task itself, no pod affinity, no
topology spread, no preferred terms, no domain score) is placed one at a time the long way
(``Placer.place`` then allocate, each copy refusing the rows the copies before it took) with a
plan that is known in advance: placing a copy on a row changes that row's idle resources and
its hostname domain's counts, nothing else. So the next copy's domain checks are the first's
with the taken rows refused, and every other row keeps its score. The copies therefore go to
the best rows that pass the first copy's checks, one each, best first (ties to the lower row):
``best_rows``. That needs each row to be a hostname domain of its own (``Topology.identity``):
a node without the label, or two nodes sharing one, would let copies share a domain or a row.

Other pods' required anti-affinity terms that match the task (``EXISTING_ANTI_AFFINITY``) stay
as they are during the gang's placement: the gang's pods hold only their own terms.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.api import podspec, snapshot
from scheduler.framework import topology

__all__ = ["Mask", "Rows", "Scores", "alike", "best_rows", "eligible", "own_terms", "top_rows"]

_TERMS = ("affinity", "anti_affinity", "preferred_affinity", "preferred_anti_affinity", "spread")

Scores = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
Rows = npt.NDArray[np.intp]


def eligible(topo: topology.Topology, tasks: list[snapshot.Task]) -> bool:
    """Whether ``tasks`` (one run: same request and placement) may be placed by ``best_rows``:
    their placement's only pod term is hostname anti-affinity that each of them matches."""
    terms = own_terms(tasks, "anti_affinity")
    if terms is None or any(t.topology_key != podspec.HOSTNAME for t in terms):
        return False
    return topo.identity(podspec.HOSTNAME)


def own_terms(tasks: list[snapshot.Task], kind: str) -> tuple[podspec.PodTerm, ...] | None:
    """The run's required terms of ``kind`` (``anti_affinity`` or ``affinity``) when they are its
    only pod terms, its tasks share namespace and labels (other labels may match other pods'
    terms) and each task matches every one of them; else None."""
    first = tasks[0]
    p = first.placement
    terms: tuple[podspec.PodTerm, ...] = getattr(p, kind)
    if not terms or any(getattr(p, other) for other in _TERMS if other != kind):
        return None
    if not alike(tasks):
        return None
    return terms if all(t.pods.matches(first.namespace, first.labels) for t in terms) else None


def alike(tasks: list[snapshot.Task]) -> bool:
    """Whether the run's tasks share namespace and labels (then every term matches all or none)."""
    first = tasks[0]
    labels = first.labels
    return all(t.namespace == first.namespace and (t.labels is labels or t.labels == labels) for t in tasks[1:])


def best_rows(scores: Scores, ok: Mask | None, count: int) -> list[int]:
    """Up to ``count`` rows where ``scores`` > -inf and ``ok``, by score, then row, ascending:
    what ``count`` argmax picks in turn make when each pick's row drops out."""
    rows = np.arange(len(scores)) if ok is None else np.flatnonzero(ok)
    picked: list[int] = top_rows(scores, rows, count).tolist()
    return picked


def top_rows(scores: Scores, rows: Rows, count: int) -> Rows:
    """The ``count`` best of ``rows`` (ascending) whose score is above -inf, by score, then row,
    best first."""
    values = scores.take(rows)
    top = values.max() if len(values) and count > 0 else -np.inf
    if top == -np.inf:
        return rows[:0]
    at = np.flatnonzero(values == top)
    if len(at) >= count:  # count rows share the best score (alike nodes): the lowest of them
        chosen: Rows = rows.take(at[:count])
        return chosen
    fit = values > -np.inf
    if not fit.all():
        rows, values = rows[fit], values[fit]
    if len(rows) > count:
        cut = len(values) - count
        kth = np.partition(values, cut)[cut]  # the count-th best score
        above = rows[values > kth]
        tied = rows[values == kth][: count - len(above)]  # the lowest rows among those tied
        rows = np.concatenate((above, tied))
    order = np.lexsort((rows, -scores[rows]))
    ordered: Rows = rows[order]
    return ordered
