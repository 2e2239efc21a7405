"""The Queue's rules, stated once (``bridge.models.queue``): every surface refuses the same values
with the same message, and the CRD's bounds are the rules' bounds."""

from __future__ import annotations

import argparse
import pathlib
from typing import Any

import pydantic
import pytest

from bridge import crdgen, errors
from bridge.adapters import base
from bridge.adapters.scheduling import queue as queue_kind
from bridge.models import queue as queue_model
from scheduler.api import building
from vbridge.commands import jobs as jobs_command

CRDS = pathlib.Path(__file__).parents[3] / "crds"

# (spec, the message every surface gives)
REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"weight": 0}, "spec.weight must be an integer from 1 to 65535, got 0"),
    ({"weight": 65536}, "spec.weight must be an integer from 1 to 65535, got 65536"),
    ({"weight": -3}, "spec.weight must be an integer from 1 to 65535, got -3"),
    ({"weight": "4"}, "spec.weight must be an integer from 1 to 65535, got '4'"),
    ({"weight": True}, "spec.weight must be an integer from 1 to 65535, got True"),
    ({"priority": -1}, "spec.priority must be an integer from 0 to 2147483647, got -1"),
    ({"priority": 2**31}, "spec.priority must be an integer from 0 to 2147483647, got 2147483648"),
    ({"capability": {"cpu": "-1"}}, "spec.capability.cpu must not be negative, got '-1'"),
    ({"deserved": {"memory": -5}}, "spec.deserved.memory must not be negative, got -5"),
    ({"guarantee": {"resource": {"cpu": "-500m"}}}, "spec.guarantee.resource.cpu must not be negative, got '-500m'"),
    ({"capability": {"cpu": "lots"}}, "spec.capability.cpu is not a quantity: 'lots'"),
]


def _model_refusal(spec: dict[str, Any]) -> str:
    with pytest.raises(pydantic.ValidationError) as refused:
        queue_model.QueueSpec.model_validate(spec)
    [error] = refused.value.errors()
    return str(error["ctx"]["error"])


def _admission_refusal(spec: dict[str, Any]) -> str:
    obj = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "ml"}, "spec": spec}
    with pytest.raises(errors.InvalidObjectError) as refused:
        queue_kind.QueueAdapter().admit(obj, base.Context(namespace=""))
    return str(refused.value)


def _scheduler_refusal(spec: dict[str, Any]) -> str:
    obj = {"metadata": {"name": "ml", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec}
    snap = building.build(nodes=(), pods=(), podgroups=(), queues=[obj])
    return snap.queues["ml"].unsound


@pytest.mark.parametrize(("spec", "message"), REFUSED)
def test_model_admission_and_scheduler_refuse_alike(spec: dict[str, Any], message: str) -> None:
    assert _model_refusal(spec) == message
    assert _admission_refusal(spec) == message
    assert _scheduler_refusal(spec) == message


WHOLE_WEIGHTS = [(s["weight"], m) for s, m in REFUSED if set(s) == {"weight"} and type(s["weight"]) is int]


@pytest.mark.parametrize(("weight", "message"), WHOLE_WEIGHTS)
def test_the_cli_refuses_the_same_weights_with_the_same_message(weight: int, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        jobs_command.queue_weight(str(weight))
    assert str(refused.value) == message


def test_a_word_on_the_command_line_is_refused_by_the_same_rule() -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        jobs_command.queue_weight("two")
    assert str(refused.value) == "spec.weight must be an integer from 1 to 65535, got 'two'"
    assert [jobs_command.queue_weight(t) for t in ("1", "65535")] == [queue_model.WEIGHT.low, queue_model.WEIGHT.high]


@pytest.mark.parametrize("spec", [{"weight": 1}, {"weight": 65535, "priority": 0}, {"capability": {"cpu": "0"}}])
def test_the_bounds_themselves_are_sound_everywhere(spec: dict[str, Any]) -> None:
    queue_model.QueueSpec.model_validate(spec)
    obj = {"metadata": {"name": "ml"}, "spec": spec}
    assert queue_kind.QueueAdapter().admit(obj, base.Context(namespace="")) is None
    assert _scheduler_refusal(spec) == ""


def test_the_crds_bounds_are_the_rules() -> None:
    spec = crdgen.manifest(queue_model.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    fields = spec["properties"]
    for rule in (queue_model.WEIGHT, queue_model.PRIORITY):
        field = fields[rule.path.removeprefix("spec.")]
        assert (field["type"], field["minimum"], field["maximum"]) == ("integer", rule.low, rule.high)
    assert fields["weight"]["default"] == 1
    parent = fields["parent"]
    assert (parent["maxLength"], parent["pattern"]) == (queue_model.NAME_MAX, queue_model.NAME_PATTERN)
    assert crdgen.check(CRDS) == []  # and crds/ is what the models generate


def test_a_parent_that_is_not_a_name_is_refused_as_the_crd_would() -> None:
    with pytest.raises(errors.InvalidObjectError, match=r"spec.parent must be a queue name, got 'Team_A'"):
        queue_model.check("ml", {"parent": "Team_A"})
    with pytest.raises(pydantic.ValidationError, match="parent"):
        queue_model.QueueSpec.model_validate({"parent": "Team_A"})
