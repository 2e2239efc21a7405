"""``volcano-scheduler.conf`` for this scheduler: ``framework.config`` checked against the registries.

``parse(text, scheduler_name=..., ...)`` and ``default()`` are what commands, tools, benches
and tests call. The names a conf may use are derived, never kept in step by hand: ``KNOWN`` is
the keys of ``actions.registry.ACTIONS`` and ``plugins.registry.PLUGINS``, handed to
``framework.config`` (which, being below both, imports neither). So registering an action or a
plugin is all it takes for the conf to accept it. Any action or plugin this scheduler does not
have is an error naming it (``framework.config``), as is a Volcano switch a plugin refuses
(``Plugin.refused``, e.g. drf's ``enableHierarchy``): a conf is carried out whole, or the
scheduler does not start.

``backend="native"`` (``defaults.NATIVE``): kube-scheduler places the pods, so a cycle runs only
the queue half, ``NATIVE_ACTIONS`` in that order and whatever the conf's order (``native_actions``):
enqueue always; reclaim (``actions.nativereclaim``: whole groups, at admission) when the conf
lists ``reclaim`` or ``gangreclaim``, unless its only one is gangreclaim with ``allowWholeBundle:
false`` (that takes surplus replicas only, which this backend cannot take back); the placing
actions allocate, backfill, preempt and gangpreempt are kube-scheduler's there. Then
``actions.ungate``; the plugins and their arguments are the conf's. The scheduler name then
defaults to kube-scheduler's (``defaults.NATIVE_SCHEDULER_NAME``): those are the pods it reads.
"""

from __future__ import annotations

import dataclasses

from bridge import defaults
from scheduler import errors as scheduler_errors
from scheduler.actions import gangpreempt
from scheduler.actions import registry as action_registry
from scheduler.framework import config
from scheduler.plugins import registry as plugin_registry

__all__ = ["KNOWN", "NATIVE_ACTIONS", "default", "native_actions", "parse"]

NATIVE_ACTIONS = tuple(action_registry.NATIVE)  # what a cycle may run on the native backend, in order

KNOWN = config.Known(actions=tuple(action_registry.ACTIONS), plugins=tuple(plugin_registry.PLUGINS))


def parse(
    text: str,
    *,
    scheduler_name: str | None = None,
    overcommit_factor: float | None = None,
    spark_reservation_timeout: float = defaults.SPARK_RESERVATION_TIMEOUT,
    fast_paths: bool = True,
    backend: str = defaults.BACKEND,
) -> config.SchedulerConfig:
    """``config.parse`` with this scheduler's actions and plugins (see ``config.parse``), then
    each plugin's refused switches; on the native backend, its actions (module docstring)."""
    native = backend == defaults.NATIVE
    if backend not in (defaults.BACKEND, defaults.NATIVE):
        raise scheduler_errors.SchedulerConfigError(f"backend {backend!r}: the scheduler runs as volcano or native")
    if scheduler_name is None:
        scheduler_name = defaults.NATIVE_SCHEDULER_NAME if native else defaults.SCHEDULER_NAME
    conf = config.parse(
        text,
        KNOWN,
        scheduler_name=scheduler_name,
        overcommit_factor=overcommit_factor,
        spark_reservation_timeout=spark_reservation_timeout,
        fast_paths=fast_paths,
    )
    for option in (o for tier in conf.tiers for o in tier):
        for key, why in plugin_registry.PLUGINS[option.name].refused.items():
            if option.switched_on(key):
                raise scheduler_errors.SchedulerConfigError(
                    f"plugin {option.name}: {key}: {why}; remove it from the conf"
                )
    for name in conf.action_arguments:
        check = action_registry.ARGUMENTS.get(name)
        if check is not None:
            check(conf.action(name))
    if native:
        return dataclasses.replace(conf, actions=native_actions(conf), backend=defaults.NATIVE)
    return conf


def native_actions(conf: config.SchedulerConfig) -> tuple[str, ...]:
    """The conf's actions as the native backend runs them (module docstring)."""
    listed = set(conf.actions)
    reclaims = "reclaim" in listed or ("gangreclaim" in listed and gangpreempt.allow_whole(conf.action("gangreclaim")))
    return tuple(name for name in NATIVE_ACTIONS if name == "enqueue" or (name == "reclaim" and reclaims))


def default() -> config.SchedulerConfig:
    """Volcano's default actions and tiers, as far as this scheduler has the plugins."""
    return config.default(KNOWN)
