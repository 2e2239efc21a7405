"""configure: the names a conf may use are the registries', derived, with no list of their own."""

from __future__ import annotations

import dataclasses

import pytest

from scheduler import configure, errors
from scheduler.actions import registry as action_registry
from scheduler.framework import config
from scheduler.plugins import registry as plugin_registry


def _tiers(*names: str) -> str:
    return "tiers:\n- plugins: [" + ", ".join(f"{{name: {n}}}" for n in names) + "]\n"


def test_every_registered_action_is_accepted_in_order() -> None:
    names = list(reversed(action_registry.ACTIONS))
    conf = configure.parse(f'actions: "{", ".join(names)}"')
    assert conf.actions == tuple(names)


def test_every_registered_plugin_is_kept_and_volcanos_others_are_unsupported() -> None:
    conf = configure.parse(_tiers(*plugin_registry.PLUGINS, "drf", "sla"))
    assert [p.name for p in conf.tiers[0]] == list(plugin_registry.PLUGINS)
    assert conf.unsupported == ("drf", "sla")
    for name, cls in plugin_registry.PLUGINS.items():
        assert cls.name == name  # the conf name is the class's own


def test_always_on_plugins_are_not_conf_names() -> None:
    for cls in plugin_registry.ALWAYS:
        assert configure.parse(_tiers(cls.name)).unsupported == (cls.name,)


def test_the_framework_checks_against_what_it_is_handed() -> None:
    known = config.Known(actions=("allocate", "teleport"), plugins=("gang",))
    conf = config.parse('actions: "teleport"\n' + _tiers("gang", "priority"), known)
    assert conf.actions == ("teleport",) and conf.unsupported == ("priority",)
    with pytest.raises(errors.SchedulerConfigError, match="unknown action"):
        config.parse('actions: "enqueue"', known)
    # Volcano's default tiers, as far as the plugins are known: drf never is here.
    assert [[p.name for p in tier] for tier in config.default(known).tiers] == [["gang"], []]


def test_an_action_not_registered_is_an_error() -> None:
    with pytest.raises(errors.SchedulerConfigError, match="teleport; known: enqueue, allocate"):
        configure.parse('actions: "allocate, teleport"')


def test_default_is_volcanos_default_conf() -> None:
    assert configure.default() == dataclasses.replace(configure.parse(""), unsupported=())
