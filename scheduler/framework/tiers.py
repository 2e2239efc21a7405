"""How plugin answers combine, tier by tier, as Volcano's ``session_plugins.go`` does.

- orders: keys concatenated in tier order (the first plugin that tells two apart wins),
  then creation time and uid;
- job_ready / job_pipelined / allocatable: every opinion must agree (AND);
- job_valid: the first Invalid wins; enqueueable: any reject rejects (``enqueue_refusal`` names
  the first that does); overused: any yes;
- predicates, static and domain predicates: AND; node and domain scores: sum; topological: any
  (and only the plugins that say a task is topological are asked for its domain hooks);
  domain_rule: the plugin's when it is the task's only domain plugin;
- victims: intersected within a tier; the first tier with an opinion decides, none → none
  (``every_tier=True``, for gangreclaim: intersected over every tier with an opinion);
- preemptive: AND of the plugins' ``preemptive``, or of ``allocatable`` for a plugin without it;
- victim queue order: keys concatenated in tier order (``orders_victims``: some plugin has one);
- ``shared_queue_order``, ``interleaves``: any plugin's.

A plugin entry's Volcano switch set to false (``enableJobOrder: false``, ``enablePreemptable:
false``, … in ``PluginOption.enabled``) leaves that plugin out of the hooks it names (``SWITCHES``).

The plugins are built from a registry the caller hands in (conf name → class; the framework
imports no plugin): first ``always``, the plugins every session has whatever the conf says,
each opened (``on_session_open``) at once; then the configured tiers' plugins, opened in tier
order once all are built. Names the registry lacks are skipped (``scheduler.configure`` refuses
a conf that names one, so only a conf parsed against another registry has any). ``always``
plugins take part in no tier: they only set the session up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scheduler.api import snapshot
from scheduler.framework import config, counted, plugin, scored, session

__all__ = ["SWITCHES", "Registry", "Tiers"]

Registry = Mapping[str, type[plugin.Plugin]]
_NONE: list[plugin.Plugin] = []  # shared, never changed: what most tasks get from ``_domain_plugins``


# Volcano's switch for each hook (``victims`` has one per action); job_valid has none.
SWITCHES = {
    "job_order": "enableJobOrder",
    "job_ready": "enableJobReady",
    "job_pipelined": "enableJobPipelined",
    "queue_order": "enableQueueOrder",
    "predicate": "enablePredicate",
    "static_predicate": "enablePredicate",
    "node_score": "enableNodeOrder",
    "enqueueable": "enableJobEnqueued",
    "overused": "enabledOverused",
    "allocatable": "enabledAllocatable",
    "preempt": "enablePreemptable",
    "reclaim": "enableReclaimable",
    "gangpreempt": "enablePreemptable",
    "gangreclaim": "enableReclaimable",
}


def _overrides(p: plugin.Plugin, hook: str) -> bool:
    if hook in SWITCHES and not p.option.switched_on(SWITCHES[hook]):
        return False
    return getattr(type(p), hook) is not getattr(plugin.Plugin, hook)


class Tiers:
    def __init__(
        self,
        conf: config.SchedulerConfig,
        ssn: session.Session,
        registry: Registry,
        always: Sequence[type[plugin.Plugin]] = (),
    ) -> None:
        self.always = [cls(config.PluginOption(cls.name), ssn) for cls in always]
        for p in self.always:
            p.on_session_open()
        self.tiers = [[registry[opt.name](opt, ssn) for opt in tier if opt.name in registry] for tier in conf.tiers]
        self.all = [p for tier in self.tiers for p in tier]
        for p in self.all:
            p.on_session_open()
        self.session = ssn
        # Bound methods of the plugins that override each hook, in tier order, looked up once:
        # these run per task and per job, and the base hooks only ever answer None.
        self._predicates = self._hooks("predicate")
        self._static = self._hooks("static_predicate")
        self._scores = self._hooks("node_score")
        self._topological = [p for p in self.all if _overrides(p, "topological")]
        self._topological_for: dict[str, list[plugin.Plugin]] = {}
        self._allocatable = [p for p in self.all if _overrides(p, "allocatable")]
        self._job_valid = self._hooks("job_valid")
        self._job_ready = self._hooks("job_ready")
        self._job_pipelined = self._hooks("job_pipelined")
        self._job_order = self._hooks("job_order")
        self._queue_order = self._hooks("queue_order")
        self._enqueueable = self._hooks("enqueueable")
        self._overused = self._hooks("overused")
        self._preemptive = [
            p.preemptive if _overrides(p, "preemptive") else p.allocatable
            for p in self.all
            if _overrides(p, "preemptive") or _overrides(p, "allocatable")
        ]
        self._victim_queue_order = self._hooks("victim_queue_order")
        self.orders_victims = bool(self._victim_queue_order)
        self.shared_queue_order = any(p.shared_queue_order for p in self.all)
        self.interleaves = any(p.interleaves for p in self.all)

    def _hooks(self, name: str) -> list[Any]:
        return [getattr(p, name) for p in self.all if _overrides(p, name)]

    def job_valid(self, job: str) -> plugin.Invalid | None:
        return next((r for r in (hook(job) for hook in self._job_valid) if r is not None), None)

    def job_ready(self, job: str) -> bool:
        return all(r is not False for r in (hook(job) for hook in self._job_ready))

    def job_pipelined(self, job: str) -> bool:
        return all(r is not False for r in (hook(job) for hook in self._job_pipelined))

    def job_order(self, job: str) -> tuple[Any, ...]:
        info = self.session.job(job)
        return (*(hook(job) or () for hook in self._job_order), info.created, info.uid)

    def queue_order(self, queue: str) -> tuple[Any, ...]:
        info = self.session.snapshot.queues[queue]
        return (*(hook(queue) or () for hook in self._queue_order), info.created, queue)

    def enqueueable(self, job: str) -> bool:
        return self.enqueue_refusal(job) is None

    def enqueue_refusal(self, job: str, *, ignore: tuple[str, ...] = ()) -> str | None:
        """The name of the first plugin whose ``enqueueable`` rejects ``job`` (later ones are
        not asked, as ``enqueueable`` short-circuits), or None when every plugin agrees; the
        plugins named in ``ignore`` are not asked (native reclaim: all but the cluster's say)."""
        for hook in self._enqueueable:
            if hook.__self__.name in ignore:
                continue
            if hook(job) is False:
                return str(hook.__self__.name)
        return None

    def allocatable(self, queue: str, task: snapshot.Task) -> bool:
        return all(r is not False for r in (p.allocatable(queue, task) for p in self._allocatable))

    def allocatable_refusal(self, queue: str, task: snapshot.Task) -> str | None:
        """The message of the first plugin whose ``allocatable`` rejects ``task``, if it has one."""
        for p in self._allocatable:
            if p.allocatable(queue, task) is False:
                return p.allocatable_message(queue, task)
        return None

    def enqueue_message(self, job: str, refusal: str) -> str | None:
        """The message of the plugin named ``refusal`` for rejecting ``job``, if it has one."""
        named = next((p for p in self.all if p.name == refusal), None)
        return named.enqueue_message(job) if named is not None else None

    def refuser_job_valid(self, job: str, refusal: str) -> plugin.Invalid | None:
        """The ``job_valid`` verdict of the plugin named ``refusal`` (which kept ``job`` Pending)."""
        named = next((p for p in self.all if p.name == refusal), None)
        return named.job_valid(job) if named is not None else None

    def preemptive(self, queue: str, task: snapshot.Task) -> bool:
        return all(r is not False for r in (hook(queue, task) for hook in self._preemptive))

    def victim_queue_order(self, queue: str, preemptor_queue: str) -> tuple[Any, ...]:
        return tuple(k for hook in self._victim_queue_order for k in hook(queue, preemptor_queue) or ())

    def allocatable_count(self, queue: str, task: snapshot.Task, count: int) -> int:
        """How many of ``count`` identical allocations in a row ``allocatable`` would allow.

        A plugin with an ``allocatable`` opinion but no ``allocatable_count`` gives 0, which sends
        the caller down the one-task-at-a-time path: slower, never wrong.
        """
        allowed = count
        for p in self._allocatable:
            answer = p.allocatable_count(queue, task, count)
            if answer is None and type(p).allocatable_count is plugin.Plugin.allocatable_count:
                return 0
            if answer is not None:
                allowed = min(allowed, answer)
        return allowed

    def overused(self, queue: str) -> bool:
        return any(hook(queue) for hook in self._overused)

    def predicate(self, task: snapshot.Task, rows: plugin.Rows) -> list[tuple[str, plugin.Mask]]:
        return [check for hook in self._predicates for check in hook(task, rows)]

    def static_predicate(self, task: snapshot.Task) -> list[tuple[str, plugin.Mask]]:
        return [check for hook in self._static for check in hook(task)]

    def topological(self, task: snapshot.Task) -> bool:
        topo = self.session.topology
        if not (self._topological and topo.active) or not (task.placement.pod_terms or topo.held(task)):
            return False  # no term of its own, none held that matches it: no domain hook cares
        return bool(self._domain_plugins(task))

    def _domain_plugins(self, task: snapshot.Task) -> list[plugin.Plugin]:
        """The plugins whose ``topological`` holds for ``task`` (asked once per task and cycle:
        the answer depends on the task's own terms and the terms the session's pods hold)."""
        found = self._topological_for.get(task.key)
        if found is None:
            found = [p for p in self._topological if p.topological(task)] or _NONE
            self._topological_for[task.key] = found
        return found

    def domain_predicate(self, task: snapshot.Task) -> list[tuple[str, plugin.Mask]]:
        return [check for p in self._domain_plugins(task) for check in p.domain_predicate(task)]

    def domain_rule(self, task: snapshot.Task) -> tuple[list[plugin.Mask], counted.Rule] | None:
        """The one domain plugin's ``domain_rule`` when the task has one such plugin (so no other
        domain check or score), else None."""
        plugins = self._domain_plugins(task)
        return plugins[0].domain_rule(task) if len(plugins) == 1 else None

    def domain_split(self, task: snapshot.Task) -> list[scored.Part] | None:
        """Every domain plugin's ``domain_split``, in the order ``domain_score`` sums them, when
        each can split its own and the parts read one topology key at most; else None."""
        parts: list[scored.Part] = []
        for p in self._domain_plugins(task):
            split = p.domain_split(task)
            if split is None:
                return None
            parts += split
        return parts if len({p.key for p in parts} - {None}) <= 1 else None

    def domain_score(self, task: snapshot.Task, feasible: plugin.Mask) -> plugin.Scores | None:
        total: plugin.Scores | None = None
        for p in self._domain_plugins(task):
            score = p.domain_score(task, feasible)
            if score is not None:
                total = score if total is None else total + score
        return total

    def node_score(self, task: snapshot.Task, rows: plugin.Rows, extra: plugin.Counts | None = None) -> plugin.Scores:
        total: plugin.Scores | None = None
        for hook in self._scores:
            score = hook(task, rows, extra)
            if score is not None:
                total = score if total is None else total + score  # 0 + x is x: no zeros to start from
        return np.zeros(len(rows), dtype=np.float64) if total is None else total

    def victims(
        self, preemptor: snapshot.Task, candidates: Sequence[snapshot.Task], *, action: str, every_tier: bool = False
    ) -> list[snapshot.Task]:
        found: list[snapshot.Task] | None = None
        for tier in self.tiers:
            chosen: list[snapshot.Task] | None = found
            for p in tier:
                if not p.option.switched_on(SWITCHES.get(action, "")):
                    continue
                allowed = p.victims(preemptor, chosen if chosen is not None else candidates, action=action)
                if allowed is not None:
                    chosen = allowed
            if chosen is not None and not every_tier:
                return chosen
            found = chosen
        return found or []
