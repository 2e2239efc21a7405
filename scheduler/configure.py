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
the queue half: ``NATIVE_ACTIONS`` of the conf (enqueue; the placing actions allocate, backfill
and preempt are kube-scheduler's there, and reclaim is not carried over yet), then
``actions.ungate``; the plugins and their arguments are the conf's. The scheduler name then
defaults to kube-scheduler's (``defaults.NATIVE_SCHEDULER_NAME``): those are the pods it reads.
"""

from __future__ import annotations

import dataclasses

from bridge import defaults
from scheduler import errors
from scheduler.actions import registry as action_registry
from scheduler.framework import config
from scheduler.plugins import registry as plugin_registry

__all__ = ["KNOWN", "NATIVE_ACTIONS", "default", "parse"]

NATIVE_ACTIONS = ("enqueue",)  # what a cycle runs on the native backend, whatever the conf lists

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
        raise errors.SchedulerConfigError(f"backend {backend!r}: the scheduler runs as volcano or native")
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
                raise errors.SchedulerConfigError(f"plugin {option.name}: {key}: {why}; remove it from the conf")
    for name in conf.action_arguments:
        check = action_registry.ARGUMENTS.get(name)
        if check is not None:
            check(conf.action(name))
    if native:
        return dataclasses.replace(conf, actions=NATIVE_ACTIONS, backend=defaults.NATIVE)
    return conf


def default() -> config.SchedulerConfig:
    """Volcano's default actions and tiers, as far as this scheduler has the plugins."""
    return config.default(KNOWN)
