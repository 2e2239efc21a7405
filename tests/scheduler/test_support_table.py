"""The README's table of Volcano's scheduler plugins and actions says what the conf parser does."""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

from scheduler import configure
from scheduler import errors as scheduler_errors
from scheduler.actions import registry as action_registry
from scheduler.framework import config
from scheduler.plugins import registry as plugin_registry

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| `([a-z-]+)` \| (action|plugin) \| (supported|refused) \|", re.MULTILINE)
# Registered by the hierarchical-queues change (issue 16 item 1), made beside this one.
ELSEWHERE = {"capacity"}


def rows() -> dict[tuple[str, str], str]:
    found = ROW.findall(README.read_text())
    assert len(found) == len(set(found))
    return {(name, kind): here for name, kind, here in found}


def test_every_volcano_action_and_plugin_has_one_row() -> None:
    assert {n for n, k in rows() if k == "action"} == set(config.VOLCANO_ACTIONS)
    assert {n for n, k in rows() if k == "plugin"} == set(config.VOLCANO_PLUGINS)


@pytest.mark.parametrize(("name", "kind"), sorted(rows()))
def test_a_row_says_what_the_parser_does(name: str, kind: str) -> None:
    here = rows()[(name, kind)]
    registered = name in (action_registry.ACTIONS if kind == "action" else plugin_registry.PLUGINS)
    if name in ELSEWHERE and not registered:
        pytest.skip(f"{name} is registered by another change")
    conf = f'actions: "allocate, {name}"' if kind == "action" else f"tiers:\n- plugins: [{{name: {name}}}]\n"
    assert registered == (here == "supported")
    if registered:
        configure.parse(conf)
    else:
        with pytest.raises(
            scheduler_errors.SchedulerConfigError, match=f"Volcano {kind}\\(s\\) {name} not implemented"
        ):
            configure.parse(conf)


def test_the_charts_default_conf_starts_with_every_plugin_it_names() -> None:
    values = yaml.safe_load((README.parent / "charts" / "volcano-bridge" / "values.yaml").read_text())
    text = values["scheduler"]["conf"]
    conf = configure.parse(text)
    named = [p["name"] for tier in yaml.safe_load(text)["tiers"] for p in tier["plugins"]]
    assert [p.name for tier in conf.tiers for p in tier] == named and "drf" in named
