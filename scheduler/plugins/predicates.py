"""predicates: node filters besides resources (the placement engine checks those).

nodeSelector, required node affinity (In/NotIn/Exists/DoesNotExist/Gt/Lt), taints with
effect NoSchedule/NoExecute that the pod does not tolerate, cordoned nodes, and required pod
anti-affinity on ``kubernetes.io/hostname`` against pods already on the node or placed this
cycle. (The symmetric direction, an existing pod's anti-affinity rejecting the newcomer, and
other topology keys are not enforced.) The pods-per-node limit is the ``pods`` resource.

Static checks depend only on the pod's placement value and node labels, so they are
evaluated over all nodes once per distinct placement and then indexed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from scheduler.api import podspec, snapshot
from scheduler.framework import config, session
from scheduler.framework import plugin as base

__all__ = ["Predicates"]

UNSCHEDULABLE = "node(s) were unschedulable"
SELECTOR = "node(s) didn't match Pod's node affinity/selector"
TAINT = "node(s) had untolerated taint"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
BLOCKING = ("NoSchedule", "NoExecute")


class Predicates(base.Plugin):
    name = "predicates"

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        nodes = ssn.snapshot.nodes
        self._schedulable = np.array([not n.unschedulable for n in nodes], dtype=bool)
        self._tainted = [i for i, n in enumerate(nodes) if any(t.effect in BLOCKING for t in n.taints)]
        # By Task.shape (an int, cheap to hash); shapes that share a placement share its masks.
        self._static: dict[int, list[tuple[str, base.Mask]]] = {}
        self._masks: dict[podspec.Placement, list[tuple[str, base.Mask]]] = {}
        self._existing: dict[podspec.AntiAffinity, base.Mask] = {}

    def predicate(self, task: snapshot.Task, rows: base.Rows) -> list[tuple[str, base.Mask]]:
        checks = self._static.get(task.shape)
        if checks is None:
            checks = self._masks.get(task.placement)
            if checks is None:
                checks = self._masks[task.placement] = self._evaluate(task.placement)
            self._static[task.shape] = checks
        out = [(reason, mask[rows]) for reason, mask in checks]
        if task.placement.anti_affinity:
            out.append((ANTI_AFFINITY, self._anti_affinity(task.placement, rows)))
        return out

    def static_predicate(self, task: snapshot.Task) -> list[tuple[str, base.Mask]]:
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
        return out

    def _evaluate(self, placement: podspec.Placement) -> list[tuple[str, base.Mask]]:
        nodes = self.session.snapshot.nodes
        checks: list[tuple[str, base.Mask]] = []
        if not self._schedulable.all():
            checks.append((UNSCHEDULABLE, self._schedulable))
        if placement.node_selector or placement.node_affinity:
            mask = np.array([_selected(placement, n.labels) for n in nodes], dtype=bool)
            checks.append((SELECTOR, mask))
        if self._tainted:
            mask = np.ones(len(nodes), dtype=bool)
            for i in self._tainted:
                mask[i] = all(
                    any(tol.tolerates(taint) for tol in placement.tolerations)
                    for taint in nodes[i].taints
                    if taint.effect in BLOCKING
                )
            checks.append((TAINT, mask))
        return checks

    def _anti_affinity(self, placement: podspec.Placement, rows: base.Rows) -> base.Mask:
        ok = np.ones(len(rows), dtype=bool)
        added = self.session.nodes.added_on_row
        for term in placement.anti_affinity:
            if term.topology_key != podspec.HOSTNAME:
                continue
            existing = self._existing.get(term)
            if existing is None:
                existing = self._existing[term] = self._existing_matches(term)
            ok &= ~existing[rows]
            if added:
                for pos, row in enumerate(rows.tolist()):
                    if ok[pos] and any(_hits(term, t.namespace, t.labels) for t in added.get(row, ())):
                        ok[pos] = False
        return ok

    def _existing_matches(self, term: podspec.AntiAffinity) -> base.Mask:
        mask = np.zeros(len(self.session.snapshot.nodes), dtype=bool)
        for row, namespace, labels in self.session.snapshot.placed_labels:
            if not mask[row] and _hits(term, namespace, labels):
                mask[row] = True
        return mask


def _hits(term: podspec.AntiAffinity, namespace: str, labels: Mapping[str, str]) -> bool:
    return namespace in term.namespaces and term.selector.matches(labels)


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


def _selected(placement: podspec.Placement, labels: Mapping[str, str]) -> bool:
    if any(labels.get(key) != value for key, value in placement.node_selector):
        return False
    return not (placement.node_affinity and not any(term.matches(labels) for term in placement.node_affinity))
