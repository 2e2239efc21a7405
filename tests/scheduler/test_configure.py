"""configure: the names a conf may use are the registries', derived, with no list of their own."""

from __future__ import annotations

import pytest

from scheduler import configure
from scheduler import errors as scheduler_errors
from scheduler.actions import registry as action_registry
from scheduler.framework import config
from scheduler.plugins import registry as plugin_registry


def _tiers(*names: str) -> str:
    return "tiers:\n- plugins: [" + ", ".join(f"{{name: {n}}}" for n in names) + "]\n"


def test_every_registered_action_is_accepted_in_order() -> None:
    names = list(reversed(action_registry.ACTIONS))
    conf = configure.parse(f'actions: "{", ".join(names)}"')
    assert conf.actions == tuple(names)


def test_every_registered_plugin_is_kept() -> None:
    conf = configure.parse(_tiers(*plugin_registry.PLUGINS))
    assert [p.name for p in conf.tiers[0]] == list(plugin_registry.PLUGINS)
    for name, cls in plugin_registry.PLUGINS.items():
        assert cls.name == name  # the conf name is the class's own


def test_a_plugin_not_registered_is_refused_by_name() -> None:
    missing = [n for n in config.VOLCANO_PLUGINS if n not in plugin_registry.PLUGINS]
    for name in missing:
        with pytest.raises(
            scheduler_errors.SchedulerConfigError, match=f"Volcano plugin\\(s\\) {name} not implemented"
        ):
            configure.parse(_tiers("gang", name))
    with pytest.raises(scheduler_errors.SchedulerConfigError, match="unknown plugin\\(s\\) teleport: remove them"):
        configure.parse(_tiers("gang", "teleport"))


def test_always_on_plugins_are_not_conf_names() -> None:
    for cls in plugin_registry.ALWAYS:
        with pytest.raises(scheduler_errors.SchedulerConfigError, match=f"unknown plugin\\(s\\) {cls.name}"):
            configure.parse(_tiers(cls.name))


def test_the_framework_checks_against_what_it_is_handed() -> None:
    known = config.Known(actions=("allocate", "teleport"), plugins=("gang",))
    conf = config.parse('actions: "teleport"\n' + _tiers("gang"), known)
    assert conf.actions == ("teleport",)
    with pytest.raises(scheduler_errors.SchedulerConfigError, match="Volcano plugin\\(s\\) priority not implemented"):
        config.parse('actions: "allocate"\n' + _tiers("gang", "priority"), known)
    with pytest.raises(scheduler_errors.SchedulerConfigError, match="Volcano action\\(s\\) enqueue not implemented"):
        config.parse('actions: "enqueue"', known)
    # Volcano's default tiers, as far as the plugins are known.
    assert [[p.name for p in tier] for tier in config.default(known).tiers] == [["gang"], []]


def test_a_switch_a_plugin_refuses_is_refused_by_name() -> None:
    with pytest.raises(scheduler_errors.SchedulerConfigError, match="plugin drf: enableHierarchy: hierarchical DRF"):
        configure.parse("tiers:\n- plugins: [{name: drf, enableHierarchy: true}]\n")
    off = configure.parse("tiers:\n- plugins: [{name: drf, enableHierarchy: false, enablePreemptable: false}]\n")
    assert off.tiers[0][0].enabled == {"enableHierarchy": False, "enablePreemptable": False}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{name: gang, enableJobOrder: maybe}", "plugin gang: enableJobOrder must be true or false"),
        ("{name: gang, enableDance: true}", "plugin gang: unknown key\\(s\\) enableDance"),
        ("{name: gang, arguments: [1]}", "plugin gang: arguments must be a mapping"),
        ("gang", "a plugin entry must be a mapping"),
    ],
)
def test_a_malformed_plugin_entry_is_refused(entry: str, message: str) -> None:
    with pytest.raises(scheduler_errors.SchedulerConfigError, match=message):
        configure.parse(f"tiers:\n- plugins: [{entry}]\n")


def test_an_action_not_registered_is_an_error() -> None:
    with pytest.raises(scheduler_errors.SchedulerConfigError, match="unknown action\\(s\\) teleport: remove them"):
        configure.parse('actions: "allocate, teleport"')
    missing = [n for n in config.VOLCANO_ACTIONS if n not in action_registry.ACTIONS]
    for name in missing:
        with pytest.raises(
            scheduler_errors.SchedulerConfigError, match=f"Volcano action\\(s\\) {name} not implemented"
        ):
            configure.parse(f'actions: "allocate, {name}"')


def test_default_is_volcanos_default_conf() -> None:
    conf = configure.default()
    assert conf == configure.parse("")
    assert [[p.name for p in tier] for tier in conf.tiers] == [list(t) for t in config.DEFAULT_TIERS]


GANG = 'actions: "enqueue, allocate, gangpreempt, gangreclaim"\nconfigurations:\n'


def test_action_arguments_come_from_volcanos_configurations() -> None:
    conf = configure.parse(GANG + "- {name: gangpreempt, arguments: {allowWholeBundle: false, maxDomains: 4}}\n")
    assert conf.action("gangpreempt").arguments == {"allowWholeBundle": False, "maxDomains": 4}
    assert conf.action("gangreclaim").arguments == {}  # no entry: the defaults (bridge.defaults)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "- {name: gangpreempt, arguments: {allowWholeBundle: maybe}}",
            "allowWholeBundle='maybe' is not true or false",
        ),
        ("- {name: gangreclaim, arguments: {maxDomains: many}}", "maxDomains='many' is not a number"),
        ("- {name: shuffle, arguments: {}}", "Volcano action\\(s\\) shuffle not implemented"),
        ("- {name: nosuch}", "unknown action\\(s\\) nosuch"),
        ("- gangpreempt", "'configurations' must be a list of"),
        ("- {name: gangpreempt, arguments: [1]}", "arguments must be a mapping"),
    ],
)
def test_bad_action_arguments_are_refused_at_start_up(entry: str, message: str) -> None:
    with pytest.raises(scheduler_errors.SchedulerConfigError, match=message):
        configure.parse(GANG + entry + "\n")
