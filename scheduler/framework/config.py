"""Scheduler configuration: Volcano's ``volcano-scheduler.conf`` plus our own options. Pure.

Accepted YAML (Volcano's format)::

    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang}, {name: conformance}]
    - plugins: [{name: overcommit, arguments: {overcommit-factor: 1.2}}, {name: predicates}, ...]

When ``actions`` or ``tiers`` is absent, Volcano's defaults apply. Plugins Volcano has but this
core does not implement (drf, sla, ...) are kept in ``SchedulerConfig.unsupported`` so the
caller can log them; an unknown *action* is an error, as in Volcano.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import yaml

from bridge import defaults
from scheduler import errors

__all__ = ["ACTIONS", "PLUGINS", "PluginOption", "SchedulerConfig", "default", "parse"]

ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim")
PLUGINS = ("gang", "priority", "conformance", "overcommit", "predicates", "proportion", "nodeorder", "binpack")
DEFAULT_ACTIONS = ("enqueue", "allocate", "backfill")
DEFAULT_TIERS = (("priority", "gang", "conformance"), ("overcommit", "drf", "predicates", "proportion", "nodeorder"))


@dataclasses.dataclass(frozen=True, slots=True)
class PluginOption:
    name: str
    arguments: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def number(self, key: str, default: float) -> float:
        """A numeric argument; Volcano's conf often quotes numbers, so strings are accepted."""
        raw = self.arguments.get(key, default)
        try:
            return float(raw)
        except (TypeError, ValueError) as exc:
            raise errors.SchedulerConfigError(f"plugin {self.name}: argument {key}={raw!r} is not a number") from exc


@dataclasses.dataclass(frozen=True, slots=True)
class SchedulerConfig:
    actions: tuple[str, ...] = DEFAULT_ACTIONS
    tiers: tuple[tuple[PluginOption, ...], ...] = tuple(
        tuple(PluginOption(name) for name in tier if name in PLUGINS) for tier in DEFAULT_TIERS
    )
    scheduler_name: str = defaults.SCHEDULER_NAME
    overcommit_factor: float = defaults.OVERCOMMIT_FACTOR
    spark_reservation_timeout: float = defaults.SPARK_RESERVATION_TIMEOUT  # seconds after the driver started
    unsupported: tuple[str, ...] = ()

    def plugin(self, name: str) -> PluginOption | None:
        return next((p for tier in self.tiers for p in tier if p.name == name), None)


def default() -> SchedulerConfig:
    return SchedulerConfig()


def parse(
    text: str,
    *,
    scheduler_name: str = defaults.SCHEDULER_NAME,
    overcommit_factor: float | None = None,
    spark_reservation_timeout: float = defaults.SPARK_RESERVATION_TIMEOUT,
) -> SchedulerConfig:
    """Parse ``volcano-scheduler.conf``; ``overcommit_factor`` overrides the plugin argument."""
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise errors.SchedulerConfigError(f"scheduler conf is not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise errors.SchedulerConfigError("scheduler conf must be a mapping with 'actions' and 'tiers'")
    actions: tuple[str, ...] = DEFAULT_ACTIONS
    if doc.get("actions") is not None:
        actions = tuple(a.strip() for a in str(doc["actions"]).split(",") if a.strip())
    unknown = [a for a in actions if a not in ACTIONS]
    if unknown:
        raise errors.SchedulerConfigError(f"unknown action(s) {', '.join(unknown)}; known: {', '.join(ACTIONS)}")
    tiers, unsupported = _tiers(doc.get("tiers"))
    factor = overcommit_factor
    if factor is None:
        option = next((p for tier in tiers for p in tier if p.name == "overcommit"), None)
        factor = (
            option.number("overcommit-factor", defaults.OVERCOMMIT_FACTOR) if option else defaults.OVERCOMMIT_FACTOR
        )
    if factor < 1.0:  # Volcano falls back to the default for factors below one
        factor = defaults.OVERCOMMIT_FACTOR
    if spark_reservation_timeout < 0:
        raise errors.SchedulerConfigError("spark_reservation_timeout must not be negative")
    return SchedulerConfig(
        actions=actions,
        tiers=tiers,
        scheduler_name=scheduler_name,
        overcommit_factor=factor,
        spark_reservation_timeout=spark_reservation_timeout,
        unsupported=unsupported,
    )


def _tiers(raw: Any) -> tuple[tuple[tuple[PluginOption, ...], ...], tuple[str, ...]]:
    if raw is None:
        return SchedulerConfig().tiers, ("drf",)
    if not isinstance(raw, list):
        raise errors.SchedulerConfigError("'tiers' must be a list of {plugins: [...]}")
    tiers: list[tuple[PluginOption, ...]] = []
    unsupported: list[str] = []
    for tier in raw:
        options = []
        for plugin in (tier or {}).get("plugins") or []:
            name = str((plugin or {}).get("name", ""))
            if name not in PLUGINS:
                unsupported.append(name)
                continue
            options.append(PluginOption(name, dict((plugin or {}).get("arguments") or {})))
        tiers.append(tuple(options))
    return tuple(tiers), tuple(unsupported)
