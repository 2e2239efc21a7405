"""predicates: node filters besides resources (the placement engine checks those).

nodeSelector, required node affinity (In/NotIn/Exists/DoesNotExist/Gt/Lt), taints with
effect NoSchedule/NoExecute that the pod does not tolerate, cordoned nodes; and, as
kube-scheduler's InterPodAffinity and PodTopologySpread filters (``interpod``, ``spread``),
required pod affinity and anti-affinity on any topology key, existing pods' required
anti-affinity, and ``DoNotSchedule`` topology spread constraints, counting the pods placed
earlier this cycle. Volcano's ``predicate.PodAffinityEnable`` and
``predicate.PodTopologySpreadEnable`` (default true) turn the last two off. The pods-per-node
limit is the ``pods`` resource.

Static checks depend only on the pod's placement value and node labels, so they are
evaluated over all nodes once per distinct placement and then indexed: a node without a
required affinity term's or a hard spread constraint's topology key is one (kube-scheduler:
unresolvable), so a pod no node has the key for can never run here. The checks that count
pods are the domain hooks (``framework.plugin``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduler import errors as scheduler_errors
from scheduler.api import podspec, snapshot
from scheduler.framework import config, counted, plugin, session
from scheduler.plugins import interpod, spread

__all__ = ["BLOCKING", "SELECTOR", "TAINT", "UNSCHEDULABLE", "Predicates", "flag"]

UNSCHEDULABLE = "node(s) were unschedulable"
SELECTOR = "node(s) didn't match Pod's node affinity/selector"
TAINT = "node(s) had untolerated taint"
BLOCKING = podspec.BLOCKING


def flag(option: config.PluginOption, key: str, default: bool) -> bool:
    """A boolean argument, as Volcano's ``GetBool`` reads it (a YAML bool or "true"/"false")."""
    raw: Any = option.arguments.get(key, default)
    if isinstance(raw, bool):
        return raw
    if str(raw).lower() in ("true", "false"):
        return str(raw).lower() == "true"
    raise scheduler_errors.SchedulerConfigError(f"plugin {option.name}: argument {key}={raw!r} is not true or false")


class Predicates(plugin.Plugin):
    name = "predicates"

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        nodes = ssn.snapshot.nodes
        self._schedulable = np.array([not n.unschedulable for n in nodes], dtype=bool)
        self._tainted = [i for i, n in enumerate(nodes) if any(t.effect in BLOCKING for t in n.taints)]
        # By Task.shape (an int, cheap to hash); shapes that share a placement share its masks.
        self._static: dict[int, list[tuple[str, plugin.Mask]]] = {}
        self._masks: dict[podspec.Placement, list[tuple[str, plugin.Mask]]] = {}
        self._pod_affinity = flag(option, "predicate.PodAffinityEnable", True)
        self._spread_on = flag(option, "predicate.PodTopologySpreadEnable", True)
        self._spread = spread.Spreading(ssn)
        self._interpod = interpod.InterPod(ssn)

    def predicate(self, task: snapshot.Task, rows: plugin.Rows) -> list[tuple[str, plugin.Mask]]:
        checks = self._static.get(task.shape)
        if checks is None:
            checks = self._masks.get(task.placement)
            if checks is None:
                checks = self._masks[task.placement] = self._evaluate(task.placement)
            self._static[task.shape] = checks
        return [(reason, mask[rows]) for reason, mask in checks]

    def topological(self, task: snapshot.Task) -> bool:
        return (self._pod_affinity and self._interpod.topological(task, scores=False)) or (
            self._spread_on and self._spread.topological(task, hard=True)
        )

    def domain_predicate(self, task: snapshot.Task) -> list[tuple[str, plugin.Mask]]:
        out = self._interpod.checks(task) if self._pod_affinity else []
        if self._spread_on and self._spread.topological(task, hard=True):
            out += self._spread.checks(task)
        return out

    def domain_rule(self, task: snapshot.Task) -> tuple[list[plugin.Mask], counted.Rule] | None:
        p = task.placement
        if not self._spread_on or p.affinity or p.anti_affinity or p.preferred_affinity or p.preferred_anti_affinity:
            return None
        rule = self._spread.rule(task)
        if rule is None:
            return None
        return [mask for _, mask in self._interpod.checks(task)] if self._pod_affinity else [], rule

    def static_predicate(self, task: snapshot.Task) -> list[tuple[str, plugin.Mask]]:
        placement = task.placement
        checks = dict(self._masks.get(placement) or self._evaluate(placement))
        out = []
        if SELECTOR in checks:
            out.append((_selector_phrase(placement), checks[SELECTOR]))
        if TAINT in checks:
            nodes = self.session.snapshot.nodes
            refused = sorted(
                {
                    f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
                    for i in self._tainted
                    for t in nodes[i].taints
                    if t.effect in BLOCKING and not any(tol.tolerates(t) for tol in placement.tolerations)
                }
            )
            phrase = f"has only taints the pod tolerates (it does not tolerate {', '.join(refused)})"
            out.append((phrase, checks[TAINT]))
        if interpod.AFFINITY in checks:
            keys = ", ".join(sorted({t.topology_key for t in placement.affinity}))
            phrase = f"has the label(s) {keys} that its pod affinity's topologyKey names"
            out.append((phrase, checks[interpod.AFFINITY]))
        if spread.MISSING in checks:
            keys = ", ".join(sorted({c.topology_key for c in placement.spread if c.hard}))
            out.append((f"has the label(s) {keys} that its topology spread constraints name", checks[spread.MISSING]))
        return out

    def _evaluate(self, placement: podspec.Placement) -> list[tuple[str, plugin.Mask]]:
        nodes = self.session.snapshot.nodes
        checks: list[tuple[str, plugin.Mask]] = []
        if not self._schedulable.all():
            checks.append((UNSCHEDULABLE, self._schedulable))
        if placement.node_selector or placement.node_affinity:
            mask = np.array([placement.selects(n.labels) for n in nodes], dtype=bool)
            checks.append((SELECTOR, mask))
        if self._tainted:
            mask = np.ones(len(nodes), dtype=bool)
            for i in self._tainted:
                mask[i] = placement.tolerates(nodes[i].taints)
            checks.append((TAINT, mask))
        if placement.affinity and self._pod_affinity:
            mask = np.ones(len(nodes), dtype=bool)
            for key in {t.topology_key for t in placement.affinity}:
                ids, size = self.session.topology.ids(key)
                mask &= ids != size
            checks.append((interpod.AFFINITY, mask))
        if self._spread_on and any(c.hard for c in placement.spread):
            checks.append((spread.MISSING, self._spread.keyed(placement, hard=True)))
        return checks


def _selector_phrase(placement: podspec.Placement) -> str:
    parts = []
    if placement.node_selector:
        parts.append("nodeSelector " + ",".join(f"{k}={v}" for k, v in placement.node_selector))
    if placement.node_affinity:
        terms = [" & ".join(_requirement_text(r) for r in term.requirements) for term in placement.node_affinity]
        parts.append("node affinity " + " or ".join(terms))
    return "matches " + " and ".join(parts)


def _requirement_text(req: podspec.Requirement) -> str:
    values = ",".join(req.values)
    if req.operator == "In":
        return f"{req.key} in ({values})"
    if req.operator == "NotIn":
        return f"{req.key} notin ({values})"
    if req.operator == "Exists":
        return req.key
    if req.operator == "DoesNotExist":
        return f"!{req.key}"
    return f"{req.key} {'>' if req.operator == 'Gt' else '<'} {values}"
