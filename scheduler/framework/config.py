"""Scheduler configuration: Volcano's ``volcano-scheduler.conf`` plus our own options. Pure.

Accepted YAML (Volcano's format)::

    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang}, {name: conformance}]
    - plugins: [{name: overcommit, arguments: {overcommit-factor: 1.2}}, {name: predicates}, ...]

When ``actions`` or ``tiers`` is absent, Volcano's defaults apply. Plugins Volcano has but this
core does not implement (drf, sla, ...) are kept in ``SchedulerConfig.unsupported`` so the
caller can log them; an unknown *action* is an error, as in Volcano.

Which actions and plugins exist is not known here: the registries are above the framework.
``parse`` and ``default`` are handed a ``Known`` (the registries' names) by the layer that
owns them, ``scheduler.configure``, which is what callers use.

``fast_paths`` (ours, not in the YAML) switches allocate's batched placements off when
false: the job-by-job, task-by-task reference path, which makes the same plan more slowly.
Equivalence tests and ``tools.explain`` ask for it by this option; nothing is patched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import yaml

from bridge import defaults
from scheduler import errors

__all__ = ["DEFAULT_ACTIONS", "DEFAULT_TIERS", "Known", "PluginOption", "SchedulerConfig", "default", "parse"]

# Volcano's defaults, by Volcano's names (drf included: ``Known`` decides what is kept).
DEFAULT_ACTIONS = ("enqueue", "allocate", "backfill")
DEFAULT_TIERS = (("priority", "gang", "conformance"), ("overcommit", "drf", "predicates", "proportion", "nodeorder"))


@dataclasses.dataclass(frozen=True, slots=True)
class Known:
    """The action and plugin names a scheduler has: the keys of its registries."""

    actions: tuple[str, ...]
    plugins: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class PluginOption:
    name: str
    arguments: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    hierarchy: bool = False  # the plugin's ``enableHierarchy: true`` (capacity: the queue tree)

    def number(self, key: str, default: float) -> float:
        """A numeric argument; Volcano's conf often quotes numbers, so strings are accepted."""
        raw = self.arguments.get(key, default)
        try:
            return float(raw)
        except (TypeError, ValueError) as exc:
            raise errors.SchedulerConfigError(f"plugin {self.name}: argument {key}={raw!r} is not a number") from exc


@dataclasses.dataclass(frozen=True, slots=True)
class SchedulerConfig:
    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]
    scheduler_name: str = defaults.SCHEDULER_NAME
    overcommit_factor: float = defaults.OVERCOMMIT_FACTOR
    spark_reservation_timeout: float = defaults.SPARK_RESERVATION_TIMEOUT  # seconds after the driver started
    unsupported: tuple[str, ...] = ()
    fast_paths: bool = True  # False: allocate's reference path, no batched placements

    def plugin(self, name: str) -> PluginOption | None:
        return next((p for tier in self.tiers for p in tier if p.name == name), None)


def default(known: Known) -> SchedulerConfig:
    """Volcano's default actions and tiers, keeping the plugins ``known`` has."""
    return SchedulerConfig(actions=DEFAULT_ACTIONS, tiers=_default_tiers(known))


def _default_tiers(known: Known) -> tuple[tuple[PluginOption, ...], ...]:
    return tuple(tuple(PluginOption(name) for name in tier if name in known.plugins) for tier in DEFAULT_TIERS)


def parse(
    text: str,
    known: Known,
    *,
    scheduler_name: str = defaults.SCHEDULER_NAME,
    overcommit_factor: float | None = None,
    spark_reservation_timeout: float = defaults.SPARK_RESERVATION_TIMEOUT,
    fast_paths: bool = True,
) -> SchedulerConfig:
    """Parse ``volcano-scheduler.conf`` against the ``known`` actions and plugins;
    ``overcommit_factor`` overrides the plugin argument."""
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise errors.SchedulerConfigError(f"scheduler conf is not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise errors.SchedulerConfigError("scheduler conf must be a mapping with 'actions' and 'tiers'")
    actions: tuple[str, ...] = DEFAULT_ACTIONS
    if doc.get("actions") is not None:
        actions = tuple(a.strip() for a in str(doc["actions"]).split(",") if a.strip())
    unknown = [a for a in actions if a not in known.actions]
    if unknown:
        raise errors.SchedulerConfigError(f"unknown action(s) {', '.join(unknown)}; known: {', '.join(known.actions)}")
    tiers, unsupported = _tiers(doc.get("tiers"), known)
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
        fast_paths=fast_paths,
    )


def _tiers(raw: Any, known: Known) -> tuple[tuple[tuple[PluginOption, ...], ...], tuple[str, ...]]:
    if raw is None:
        dropped = tuple(name for tier in DEFAULT_TIERS for name in tier if name not in known.plugins)
        return _default_tiers(known), dropped
    if not isinstance(raw, list):
        raise errors.SchedulerConfigError("'tiers' must be a list of {plugins: [...]}")
    tiers: list[tuple[PluginOption, ...]] = []
    unsupported: list[str] = []
    for tier in raw:
        options = []
        for plugin in (tier or {}).get("plugins") or []:
            name = str((plugin or {}).get("name", ""))
            if name not in known.plugins:
                unsupported.append(name)
                continue
            arguments = dict((plugin or {}).get("arguments") or {})
            options.append(PluginOption(name, arguments, (plugin or {}).get("enableHierarchy") is True))
        tiers.append(tuple(options))
    return tuple(tiers), tuple(unsupported)
