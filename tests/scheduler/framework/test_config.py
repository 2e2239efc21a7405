from __future__ import annotations

import pytest

from scheduler import configure
from scheduler import errors as scheduler_errors

HELM = """
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
    arguments: {enablePreemptable: false}
  - name: conformance
- plugins:
  - name: overcommit
    arguments: {overcommit-factor: "1.5"}
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


def test_defaults_are_volcanos() -> None:
    conf = configure.parse("")
    assert conf.actions == ("enqueue", "allocate", "backfill")
    assert [[p.name for p in tier] for tier in conf.tiers] == [
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "nodeorder"],
    ]
    assert (conf.scheduler_name, conf.overcommit_factor, conf.spark_reservation_timeout) == ("volcano", 1.2, 300.0)


def test_helm_conf() -> None:
    conf = configure.parse(HELM, scheduler_name="bridge", spark_reservation_timeout=60)
    assert conf.actions[-1] == "reclaim"
    assert conf.overcommit_factor == 1.5
    assert conf.plugin("drf") is not None
    assert conf.plugin("binpack") is not None
    assert (conf.scheduler_name, conf.spark_reservation_timeout) == ("bridge", 60)


def test_option_overrides_and_low_factor_falls_back() -> None:
    assert configure.parse(HELM, overcommit_factor=2.0).overcommit_factor == 2.0
    assert configure.parse(HELM, overcommit_factor=0.5).overcommit_factor == 1.2


@pytest.mark.parametrize("text", ['actions: "enqueue, teleport"', "- just a list", "actions: [unclosed"])
def test_invalid_conf_raises_config_error(text: str) -> None:
    with pytest.raises(scheduler_errors.SchedulerConfigError):
        configure.parse(text)
