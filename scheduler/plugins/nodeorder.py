"""Node scores: ``nodeorder`` (least-allocated spread, most-allocated, balanced) and ``binpack``.

Arguments follow Volcano: nodeorder ``leastrequested.weight`` (default 1),
``mostrequested.weight`` (0), ``balancedresource.weight`` (1); binpack ``binpack.weight`` (1),
``binpack.cpu`` (1), ``binpack.memory`` (1). Scores are 0-100 per part times its weight, from
each node's own row (what it would look like with the pod on it), so they vectorise and stay
valid when only other rows change.
"""

from __future__ import annotations

import numpy as np

from scheduler import config, resources, session, snapshot
from scheduler.plugins import base

__all__ = ["BinPack", "NodeOrder"]


def _fractions(
    ssn: session.Session, task: snapshot.Task, rows: base.Rows, extra: base.Counts | None
) -> tuple[base.Scores, base.Scores]:
    """Requested fraction of cpu and memory per row, counting the pod itself (capped at 1).

    ``extra`` copies already on a row lower its idle by ``extra × request``; amounts are whole
    numbers in float64, so this equals the session's own running subtraction bit for bit.
    """
    req = ssn.vector(task.request)
    cols = [ssn.dims.index(resources.CPU), ssn.dims.index(resources.MEMORY)]
    # Plain arithmetic on a (rows × 2) slice: this runs once per placed pod, so fewer numpy
    # calls matter more than elegance. Nodes without the resource count as full.
    cap = ssn.snapshot.allocatable[rows][:, cols]
    idle = ssn.idle[rows][:, cols]
    if extra is not None:
        idle = idle - extra[:, None] * req[cols]
    used = cap - idle + req[cols]
    frac = np.minimum(used / np.maximum(cap, 1e-9), 1.0)
    return frac[:, 0], frac[:, 1]


class NodeOrder(base.Plugin):
    name = "nodeorder"

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        self.least = option.number("leastrequested.weight", 1)
        self.most = option.number("mostrequested.weight", 0)
        self.balanced = option.number("balancedresource.weight", 1)

    def node_score(self, task: snapshot.Task, rows: base.Rows, extra: base.Counts | None = None) -> base.Scores:
        cpu, mem = _fractions(self.session, task, rows, extra)
        score = np.zeros(len(rows))
        if self.least:
            score += self.least * (100 - (cpu + mem) * 50)
        if self.most:
            score += self.most * (cpu + mem) * 50
        if self.balanced:
            score += self.balanced * (100 - np.abs(cpu - mem) * 100)
        return score


class BinPack(base.Plugin):
    name = "binpack"

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        self.weight = option.number("binpack.weight", 1)
        self.cpu = option.number("binpack.cpu", 1)
        self.memory = option.number("binpack.memory", 1)

    def node_score(self, task: snapshot.Task, rows: base.Rows, extra: base.Counts | None = None) -> base.Scores:
        cpu, mem = _fractions(self.session, task, rows, extra)
        parts = self.cpu + self.memory
        if parts <= 0:
            return np.zeros(len(rows))
        return self.weight * 100 * (self.cpu * cpu + self.memory * mem) / parts
