"""Scheduler configuration: Volcano's ``volcano-scheduler.conf`` plus our own options. Pure.

Accepted YAML (Volcano's format)::

    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang}, {name: conformance}]
    - plugins: [{name: overcommit, arguments: {overcommit-factor: 1.2}}, {name: predicates}, ...]
    configurations:  # optional: per-action arguments (gangpreempt: allowWholeBundle, maxDomains)
    - {name: gangpreempt, arguments: {allowWholeBundle: false}}

When ``actions`` or ``tiers`` is absent, Volcano's defaults apply. Nothing a conf names is
dropped: an action or plugin this core does not have is an error naming it (one of Volcano's
v1.15 names, ``VOLCANO_ACTIONS``/``VOLCANO_PLUGINS``, says so), and so is a key of a plugin entry
other than ``name``, ``arguments`` and Volcano's ``enable…`` switches (``ENABLE_KEYS``, kept in
``PluginOption.enabled``; ``framework.tiers`` leaves out the hooks a false one switches off).

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

from bridge import defaults, errors, inputs
from scheduler import errors as scheduler_errors

__all__ = [
    "DEFAULT_ACTIONS",
    "DEFAULT_TIERS",
    "ENABLE_KEYS",
    "VOLCANO_ACTIONS",
    "VOLCANO_PLUGINS",
    "Known",
    "PluginOption",
    "SchedulerConfig",
    "default",
    "parse",
]

# Volcano's defaults, by Volcano's names.
DEFAULT_ACTIONS = ("enqueue", "allocate", "backfill")
DEFAULT_TIERS = (("priority", "gang", "conformance"), ("overcommit", "drf", "predicates", "proportion", "nodeorder"))
# Every action and plugin Volcano v1.15 registers (pkg/scheduler/actions/factory.go,
# pkg/scheduler/plugins/factory.go): a conf naming one this core lacks is refused as such.
VOLCANO_ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim", "gangpreempt", "gangreclaim", "shuffle")
VOLCANO_PLUGINS = (
    "priority",
    "gang",
    "conformance",
    "drf",
    "proportion",
    "capacity",
    "predicates",
    "nodeorder",
    "binpack",
    "overcommit",
    "deviceshare",
    "resource-strategy-fit",
    "tdm",
    "sla",
    "task-topology",
    "numa-aware",
    "cdp",
    "rescheduling",
    "usage",
    "pdb",
    "nodegroup",
    "network-topology-aware",
    "extender",
    "resourcequota",
)
# The switches of a plugin entry (Volcano's conf.PluginOption yaml keys); unset means enabled,
# but ``enableHierarchy``, which is off unless set.
ENABLE_KEYS = (
    "enableJobOrder",
    "enableHierarchy",
    "enableJobReady",
    "enableJobPipelined",
    "enableTaskOrder",
    "enablePreemptable",
    "enableReclaimable",
    "enablePreemptive",
    "enableQueueOrder",
    "EnabledClusterOrder",
    "enablePredicate",
    "enableBestNode",
    "enableNodeOrder",
    "enableTargetJob",
    "enableReservedNodes",
    "enableJobEnqueued",
    "enabledVictim",
    "enableJobStarving",
    "enabledOverused",
    "enabledAllocatable",
    "enabledHyperNodeOrder",
    "enabledSubJobReady",
    "enabledSubJobPipelined",
    "enabledSubJobOrder",
    "enabledHyperNodeGradient",
)


@dataclasses.dataclass(frozen=True, slots=True)
class Known:
    """The action and plugin names a scheduler has: the keys of its registries."""

    actions: tuple[str, ...]
    plugins: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class PluginOption:
    name: str
    arguments: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    enabled: Mapping[str, bool] = dataclasses.field(default_factory=dict)  # the ENABLE_KEYS the entry sets

    def switched_on(self, key: str) -> bool:
        """Volcano's ``isEnabled``: an unset switch is on (``enableHierarchy``: off)."""
        return self.enabled.get(key, key != "enableHierarchy")  # "" (no switch): on

    @property
    def hierarchy(self) -> bool:
        """``enableHierarchy: true`` (capacity: the queue tree)."""
        return self.switched_on("enableHierarchy")

    def flag(self, key: str, default: bool) -> bool:
        """A boolean argument; "true"/"false" text is accepted, as Volcano's ``GetBool`` does."""
        raw = self.arguments.get(key, default)
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        raise scheduler_errors.SchedulerConfigError(f"{self.name}: argument {key}={raw!r} is not true or false")

    def number(self, key: str, default: float) -> float:
        """A numeric argument; Volcano's conf often quotes numbers, so strings are accepted."""
        raw = self.arguments.get(key, default)
        try:
            return float(raw)
        except (TypeError, ValueError) as exc:
            raise scheduler_errors.SchedulerConfigError(
                f"plugin {self.name}: argument {key}={raw!r} is not a number"
            ) from exc


@dataclasses.dataclass(frozen=True, slots=True)
class SchedulerConfig:
    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]
    scheduler_name: str = defaults.SCHEDULER_NAME
    overcommit_factor: float = defaults.OVERCOMMIT_FACTOR
    spark_reservation_timeout: float = defaults.SPARK_RESERVATION_TIMEOUT  # seconds after the driver started
    fast_paths: bool = True  # False: allocate's reference path, no batched placements
    # ``configurations: [{name: <action>, arguments: {...}}]``, Volcano's per-action arguments
    action_arguments: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    # "volcano": this scheduler places the pods; "native" (``defaults.NATIVE``): kube-scheduler
    # does, and a cycle only admits groups and lifts their pods' queue gate (``scheduler.configure``).
    backend: str = defaults.BACKEND
    # PodGroups ("namespace/name") this cycle leaves alone: parked by the I/O shell after a verdict
    # that they cannot be scheduled, until something they could use changes (``scheduler.io.parking``).
    # Allocate skips them (enqueue decides them as before: its cost does not grow with a job's pods,
    # and each admission counts for the next); they still count for queue shares, and the plan gives no
    # verdict for them or their pods (their last one stands). Not from the conf: set per cycle.
    parked: frozenset[str] = frozenset()

    def plugin(self, name: str) -> PluginOption | None:
        return next((p for tier in self.tiers for p in tier if p.name == name), None)

    def action(self, name: str) -> PluginOption:
        """The arguments the conf's ``configurations`` give action ``name`` (none: empty)."""
        return PluginOption(name, self.action_arguments.get(name, {}))


def default(known: Known) -> SchedulerConfig:
    """Volcano's default actions and tiers, keeping the plugins ``known`` has."""
    return SchedulerConfig(actions=DEFAULT_ACTIONS, tiers=_default_tiers(known))


def _default_tiers(known: Known) -> tuple[tuple[PluginOption, ...], ...]:
    return tuple(tuple(PluginOption(name) for name in tier if name in known.plugins) for tier in DEFAULT_TIERS)


def _missing(kind: str, names: list[str], known: tuple[str, ...], volcano: tuple[str, ...]) -> str:
    """Why a conf naming ``names`` (which ``known`` lacks) is refused: each named, Volcano's apart."""
    theirs = [n for n in names if n in volcano]
    unknown = [n for n in names if n not in volcano]
    parts = []
    if theirs:
        parts.append(f"Volcano {kind}(s) {', '.join(theirs)} not implemented by this scheduler")
    if unknown:
        parts.append(f"unknown {kind}(s) {', '.join(unknown)}")
    return f"{'; '.join(parts)}: remove them from the conf (this scheduler has: {', '.join(known)})"


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
        doc = inputs.yaml_document("scheduler conf", text) or {}  # aliases within kubectl's bound
    except errors.InputError as exc:
        raise scheduler_errors.SchedulerConfigError(f"scheduler conf is not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise scheduler_errors.SchedulerConfigError("scheduler conf must be a mapping with 'actions' and 'tiers'")
    actions: tuple[str, ...] = DEFAULT_ACTIONS
    if doc.get("actions") is not None:
        actions = tuple(a.strip() for a in str(doc["actions"]).split(",") if a.strip())
    unknown = [a for a in actions if a not in known.actions]
    if unknown:
        raise scheduler_errors.SchedulerConfigError(_missing("action", unknown, known.actions, VOLCANO_ACTIONS))
    tiers = _tiers(doc.get("tiers"), known)
    arguments = _configurations(doc.get("configurations"), known)
    factor = overcommit_factor
    if factor is None:
        option = next((p for tier in tiers for p in tier if p.name == "overcommit"), None)
        factor = (
            option.number("overcommit-factor", defaults.OVERCOMMIT_FACTOR) if option else defaults.OVERCOMMIT_FACTOR
        )
    if factor < 1.0:  # Volcano falls back to the default for factors below one
        factor = defaults.OVERCOMMIT_FACTOR
    if spark_reservation_timeout < 0:
        raise scheduler_errors.SchedulerConfigError("spark_reservation_timeout must not be negative")
    return SchedulerConfig(
        actions=actions,
        tiers=tiers,
        scheduler_name=scheduler_name,
        overcommit_factor=factor,
        spark_reservation_timeout=spark_reservation_timeout,
        fast_paths=fast_paths,
        action_arguments=arguments,
    )


def _configurations(raw: Any, known: Known) -> dict[str, Mapping[str, Any]]:
    """Volcano's ``configurations`` list: arguments per action; an action this scheduler lacks is
    refused like one in ``actions``."""
    if raw is None:
        return {}
    if not isinstance(raw, list) or not all(isinstance(e, dict) and isinstance(e.get("name"), str) for e in raw):
        raise scheduler_errors.SchedulerConfigError(
            "'configurations' must be a list of {name: <action>, arguments: {...}}"
        )
    unknown = [e["name"] for e in raw if e["name"] not in known.actions]
    if unknown:
        raise scheduler_errors.SchedulerConfigError(_missing("action", unknown, known.actions, VOLCANO_ACTIONS))
    found: dict[str, Mapping[str, Any]] = {}
    for entry in raw:
        arguments = entry.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise scheduler_errors.SchedulerConfigError(f"configuration {entry['name']}: arguments must be a mapping")
        found[entry["name"]] = dict(arguments)
    return found


def _tiers(raw: Any, known: Known) -> tuple[tuple[PluginOption, ...], ...]:
    if raw is None:
        return _default_tiers(known)
    if not isinstance(raw, list):
        raise scheduler_errors.SchedulerConfigError("'tiers' must be a list of {plugins: [...]}")
    tiers: list[tuple[PluginOption, ...]] = []
    missing: list[str] = []
    for tier in raw:
        if not isinstance(tier, dict) or not isinstance(tier.get("plugins") or [], list):
            raise scheduler_errors.SchedulerConfigError("each tier must be a mapping {plugins: [...]}")
        options = []
        for plugin in tier.get("plugins") or []:
            if not isinstance(plugin, dict):
                raise scheduler_errors.SchedulerConfigError(
                    f"a plugin entry must be a mapping with a name, not {plugin!r}"
                )
            name = str(plugin.get("name", ""))
            if name not in known.plugins:
                missing.append(name)
                continue
            options.append(_option(name, plugin))
        tiers.append(tuple(options))
    if missing:
        raise scheduler_errors.SchedulerConfigError(_missing("plugin", missing, known.plugins, VOLCANO_PLUGINS))
    return tuple(tiers)


def _option(name: str, entry: Mapping[str, Any]) -> PluginOption:
    extra = sorted(str(k) for k in entry if k not in ("name", "arguments", *ENABLE_KEYS))
    if extra:
        raise scheduler_errors.SchedulerConfigError(
            f"plugin {name}: unknown key(s) {', '.join(extra)} (an entry has name, arguments and enable… switches)"
        )
    enabled = {k: v for k, v in entry.items() if k in ENABLE_KEYS}
    wrong = [k for k, v in enabled.items() if not isinstance(v, bool)]
    if wrong:
        raise scheduler_errors.SchedulerConfigError(f"plugin {name}: {', '.join(wrong)} must be true or false")
    arguments = entry.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise scheduler_errors.SchedulerConfigError(f"plugin {name}: arguments must be a mapping")
    return PluginOption(name, dict(arguments), enabled)
