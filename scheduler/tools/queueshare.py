"""A queue's share as explain reports it, from the very plugins the cycle uses. Pure.

``of(session, tiers, queue, podgroup, pending)``: with ``capacity`` configured, every level of
the queue tree from root (allocated, deserved) and the level that holds the group back (the
enqueue refusal for a Pending group, else the first pending task's ``allocatable`` refusal);
otherwise ``proportion``'s deserved share and whether the queue is overused (a proportion
opened for the purpose when the conf has none).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from scheduler.api import resources
from scheduler.framework import config, session, tiers
from scheduler.plugins import capacity, proportion

__all__ = ["QueueShare", "of"]


@dataclasses.dataclass(frozen=True, slots=True)
class QueueShare:
    name: str
    exists: bool
    state: str
    weight: int
    deserved: resources.Resource
    allocated: resources.Resource
    share: float  # max over dimensions of allocated / deserved
    overused: bool
    levels: tuple[tuple[str, resources.Resource, resources.Resource], ...] = ()  # capacity: root → queue
    limit: str | None = None  # capacity: the level that holds the group back, and by how much


def _proportion(ssn: session.Session, plugins: tiers.Tiers) -> proportion.Proportion:
    configured = next((p for p in plugins.all if isinstance(p, proportion.Proportion)), None)
    return configured or proportion.Proportion(config.PluginOption("proportion"), ssn)


def _capacity_queue(
    ssn: session.Session, plugin: capacity.Capacity, name: str, key: str, pending: list[str]
) -> QueueShare:
    """The queue as capacity sees it: every level from root, and what holds the group back."""
    info, zero = ssn.snapshot.queues.get(name), np.zeros(len(ssn.dims))
    path = plugin.tree.path(name) if name in plugin.chain else (name,)
    levels = tuple(
        (
            plugin.tree.label(node),
            resources.from_vector(plugin.allocated(node), ssn.dims),
            resources.from_vector(plugin.levels[node].deserved if node in plugin.levels else zero, ssn.dims),
        )
        for node in path
    )
    if ssn.job(key).phase == "Pending":
        limit = plugin.enqueue_message(key)
    else:
        first = next((ssn.task(t) for t in pending), None)
        limit = plugin.allocatable_message(name, first) if first and not plugin.allocatable(name, first) else None
    return QueueShare(
        name=name,
        exists=info is not None,
        state=info.state if info is not None else "NotFound",
        weight=info.weight if info is not None else 0,
        deserved=levels[-1][2],
        allocated=resources.from_vector(ssn.allocated.of_queue(name), ssn.dims),
        share=plugin.share(name),
        overused=False,
        levels=levels,
        limit=limit.removeprefix("PodGroup is pending: ") if limit else None,
    )


def of(ssn: session.Session, plugins: tiers.Tiers, name: str, key: str, pending: list[str]) -> QueueShare:
    configured = next((p for p in plugins.all if isinstance(p, capacity.Capacity)), None)
    if configured is not None:
        return _capacity_queue(ssn, configured, name, key, pending)
    info = ssn.snapshot.queues.get(name)
    plugin = _proportion(ssn, plugins)
    deserved = plugin.deserved.get(name, np.zeros(len(ssn.dims)))
    return QueueShare(
        name=name,
        exists=info is not None,
        state=info.state if info is not None else "NotFound",
        weight=info.weight if info is not None else 0,
        deserved=resources.from_vector(deserved, ssn.dims),
        allocated=resources.from_vector(ssn.allocated.of_queue(name), ssn.dims),
        share=plugin.share(name),
        overused=plugin.overused(name),
    )
