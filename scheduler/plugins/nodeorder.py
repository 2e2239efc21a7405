"""Node scores: ``nodeorder`` (least-allocated spread, most-allocated, balanced) and ``binpack``.

Arguments follow Volcano: nodeorder ``leastrequested.weight`` (default 1),
``mostrequested.weight`` (0), ``balancedresource.weight`` (1), ``podaffinity.weight`` (2),
``podtopologyspread.weight`` (2); binpack ``binpack.weight`` (1), ``binpack.cpu`` (1),
``binpack.memory`` (1). Scores are 0-100 per part times its weight, from each node's own row
(what it would look like with the pod on it), so they vectorise and stay valid when only other
rows change. Preferred pod affinity and anti-affinity (``interpod.score``) and ``ScheduleAnyway``
topology spread (``spread.Spreading.score``) depend on the pods in a node's topology domains
and are normalised over the feasible nodes, as kube-scheduler's scores are: they are
nodeorder's domain hooks, asked only for the tasks they concern.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.api import resources, snapshot
from scheduler.framework import config, plugin, scored, session
from scheduler.plugins import interpod, spread

__all__ = ["BinPack", "NodeOrder"]


class _Fractions:
    """Requested fraction of cpu and memory per row, counting the pod itself (capped at 1).

    ``extra`` copies already on a row lower its idle by ``extra × request``; amounts are whole
    numbers in float64, so this equals the session's own running subtraction bit for bit.
    This runs for every gang and every refreshed row, so it keeps numpy calls to a minimum:
    cpu and memory are always the first two dimensions, read as one basic slice.
    """

    def __init__(self, ssn: session.Session) -> None:
        assert ssn.dims[:2] == (resources.CPU, resources.MEMORY)
        self.session = ssn
        cap = np.ascontiguousarray(ssn.snapshot.allocatable[:, :2])
        # Capacity and divisor side by side: one ``take`` reads both.
        self.nodes = np.hstack((cap, np.maximum(cap, 1e-9)))  # nodes without the resource count as full
        self._requests: dict[int, npt.NDArray[np.float64]] = {}  # cpu and memory asked, by Task.shape

    def __call__(
        self, task: snapshot.Task, rows: plugin.Rows, extra: plugin.Counts | None
    ) -> tuple[plugin.Scores, plugin.Scores]:
        ssn = self.session
        req = self._requests.get(task.shape)
        if req is None:
            req = self._requests[task.shape] = ssn.vector(task.request)[:2]
        idle = ssn.nodes.idle.take(rows, axis=0)[:, :2]  # take: far cheaper than fancy indexing on few rows
        if extra is not None:
            idle = idle - extra[:, None] * req
        nodes = self.nodes.take(rows, axis=0)
        used = nodes[:, :2] - idle + req
        frac = np.minimum(used / nodes[:, 2:], 1.0)
        return frac[:, 0], frac[:, 1]


def _weighted(weight: float, score: plugin.Scores) -> plugin.Scores:
    return score if weight == 1 else weight * score  # 1 × x is x: one numpy call fewer


class NodeOrder(plugin.Plugin):
    name = "nodeorder"

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        self.least = option.number("leastrequested.weight", 1)
        self.most = option.number("mostrequested.weight", 0)
        self.balanced = option.number("balancedresource.weight", 1)
        self.pod_affinity = option.number("podaffinity.weight", 2)
        self.spread = option.number("podtopologyspread.weight", 2)
        self._fractions = _Fractions(ssn)
        self._spreading = spread.Spreading(ssn)
        self._interpod = interpod.InterPod(ssn)

    def topological(self, task: snapshot.Task) -> bool:
        return bool(self.pod_affinity and self._interpod.topological(task, scores=True)) or bool(
            self.spread and self._spreading.topological(task, hard=False)
        )

    def domain_score(self, task: snapshot.Task, feasible: plugin.Mask) -> plugin.Scores | None:
        total = None
        if self.pod_affinity and self._interpod.topological(task, scores=True):
            total = self._interpod.score(task, feasible, self.pod_affinity)
        if self.spread and self._spreading.topological(task, hard=False):
            part = self._spreading.score(task, feasible, self.spread)
            if part is not None:
                total = part if total is None else total + part
        return total

    def domain_split(self, task: snapshot.Task) -> list[scored.Part] | None:
        parts: list[scored.Part | None] = []
        if self.pod_affinity and self._interpod.topological(task, scores=True):
            parts.append(self._interpod.split(task, self.pod_affinity))
        if self.spread and self._spreading.topological(task, hard=False):
            parts.append(self._spreading.split(task, self.spread))
        return None if None in parts else [p for p in parts if p is not None]

    def node_score(self, task: snapshot.Task, rows: plugin.Rows, extra: plugin.Counts | None = None) -> plugin.Scores:
        cpu, mem = self._fractions(task, rows, extra)
        # Summed in the order of the parts, starting from the first present one (0 + x is x).
        parts = []
        if self.least:
            parts.append(_weighted(self.least, 100 - (cpu + mem) * 50))
        if self.most:
            parts.append((cpu + mem) * 50 if self.most == 1 else self.most * (cpu + mem) * 50)
        if self.balanced:
            parts.append(_weighted(self.balanced, 100 - np.abs(cpu - mem) * 100))
        if not parts:
            return np.zeros(len(rows))
        score = parts[0]
        for part in parts[1:]:
            score = score + part
        return score


class BinPack(plugin.Plugin):
    name = "binpack"

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        self.weight = option.number("binpack.weight", 1)
        self.cpu = option.number("binpack.cpu", 1)
        self.memory = option.number("binpack.memory", 1)
        self._fractions = _Fractions(ssn)

    def node_score(self, task: snapshot.Task, rows: plugin.Rows, extra: plugin.Counts | None = None) -> plugin.Scores:
        cpu, mem = self._fractions(task, rows, extra)
        parts = self.cpu + self.memory
        if parts <= 0:
            return np.zeros(len(rows))
        return self.weight * 100 * (self.cpu * cpu + self.memory * mem) / parts
