"""Scenario values (inputs → expected plan) and the one function that checks them.

A scenario is data: nodes, pods, PodGroups, Queues (API dicts from ``builders``) and what the
plan must say. Only the expectations a scenario states are checked; ``binds`` is exact (the
set of bound pods must match; node "*" accepts any node). ``schedule`` runs one cycle over
API dicts, on the fast paths or on the reference path.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from scheduler import configure, cycle
from scheduler.api import building, plan, snapshot
from scheduler.framework import config

NOW = datetime.datetime(2025, 1, 1, 1, 0, 0, tzinfo=datetime.UTC)


@dataclasses.dataclass(frozen=True)
class Scenario:
    id: str
    nodes: Sequence[Mapping[str, Any]]
    pods: Sequence[Mapping[str, Any]]
    podgroups: Sequence[Mapping[str, Any]]
    queues: Sequence[Mapping[str, Any]]
    priorityclasses: Sequence[Mapping[str, Any]] = ()
    conf: str | None = None  # volcano-scheduler.conf YAML; None = Volcano's defaults
    spark_timeout: float = 300.0
    now: datetime.datetime = NOW
    binds: Mapping[str, str] | None = None  # pod → node ("*" = any); exact set
    bound_counts: Mapping[str, int] = dataclasses.field(default_factory=dict)  # pod-name prefix → count
    evictions: frozenset[str] | None = None
    pipelined: Mapping[str, str] | None = None
    phases: Mapping[str, str] = dataclasses.field(default_factory=dict)  # podgroup → phase
    conditions: Mapping[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)  # (type, reason, text)
    pod_events: Mapping[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # pod → (reason, text)
    queue_states: Mapping[str, tuple[str, int, int]] = dataclasses.field(default_factory=dict)  # (state, pend, inq)
    untouched: frozenset[str] = frozenset()  # pods and podgroups the plan must not mention at all
    backend: str = "volcano"  # "native": only the queue half runs (``configure``)
    ungated: frozenset[str] | None = None  # pods whose queue gate the plan lifts; exact set

    def config(self) -> config.SchedulerConfig:
        return configure.parse(self.conf or "", spark_reservation_timeout=self.spark_timeout, backend=self.backend)

    def snapshot(self) -> snapshot.Snapshot:
        conf = self.config()
        return building.build(
            nodes=self.nodes,
            pods=self.pods,
            podgroups=self.podgroups,
            queues=self.queues,
            priorityclasses=self.priorityclasses,
            scheduler_name=conf.scheduler_name,
            native=conf.backend == "native",
        )

    def run(self) -> plan.Plan:
        return cycle.schedule(self.snapshot(), self.config(), self.now)


def schedule(data: Mapping[str, Any], conf: str = "", *, fast_paths: bool = True) -> plan.Plan:
    """One cycle over ``data`` (``building.build``'s keyword arguments) under the conf text."""
    return cycle.schedule(building.build(**data), configure.parse(conf, fast_paths=fast_paths), NOW)


def assert_expected(scenario: Scenario) -> plan.Plan:
    result = scenario.run()
    binds = result.binds()
    if scenario.binds is not None:
        assert set(binds) == {f"ns/{p}" for p in scenario.binds}, f"bound {sorted(binds)}"
        for pod_name, node_name in scenario.binds.items():
            assert node_name in ("*", binds[f"ns/{pod_name}"]), f"{pod_name} bound to {binds[f'ns/{pod_name}']}"
    for prefix, count in scenario.bound_counts.items():
        got = sum(1 for key in binds if key.split("/", 1)[1].startswith(prefix))
        assert got == count, f"{prefix}*: {got} bound, expected {count} ({sorted(binds)})"
    if scenario.evictions is not None:
        assert set(result.evictions()) == {f"ns/{p}" for p in scenario.evictions}
    if scenario.ungated is not None:
        assert set(result.ungated()) == {f"ns/{p}" for p in scenario.ungated}, f"ungated {sorted(result.ungated())}"
    if scenario.pipelined is not None:
        assert result.pipelined() == {f"ns/{p}": n for p, n in scenario.pipelined.items()}
    for group, phase in scenario.phases.items():
        assert result.podgroup(f"ns/{group}").phase == phase, result.podgroup(f"ns/{group}")
    for group, (ctype, reason, text) in scenario.conditions.items():
        conds = result.podgroup(f"ns/{group}").conditions
        assert any(c.type == ctype and c.reason == reason and text in c.message for c in conds), conds
    events = {v.pod: v for v in result.pods}
    for pod_name, (reason, text) in scenario.pod_events.items():
        verdict = events[f"ns/{pod_name}"]
        assert verdict.reason == reason and text in verdict.message, verdict
    mentioned = {op.pod for op in result.operations} | {v.key for v in result.podgroups} | set(events)
    assert not mentioned & {f"ns/{name}" for name in scenario.untouched}, sorted(mentioned)
    queues = {q.name: q for q in result.queues}
    for name, (state, pending, inqueue) in scenario.queue_states.items():
        assert (queues[name].state, queues[name].pending, queues[name].inqueue) == (state, pending, inqueue)
    return result
