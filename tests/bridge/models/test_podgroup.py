from __future__ import annotations

import pydantic
import pytest

from bridge.models import podgroup as podgroup_model
from bridge.models import queue as queue_model


def test_round_trip_keeps_camel_case_and_unknown_fields() -> None:
    body = {
        "minMember": 3,
        "minTaskMember": {"worker": 2},
        "queue": "q1",
        "futureField": {"x": 1},
        "minResources": {"cpu": 2, "memory": "1792Mi"},
    }
    spec = podgroup_model.PodGroupSpec.model_validate(body)
    assert spec.min_member == 3 and spec.min_resources == {"cpu": 2, "memory": "1792Mi"}
    assert spec.to_api() == body


def test_invalid_values_are_rejected_with_the_field_name() -> None:
    with pytest.raises(pydantic.ValidationError, match="minMember"):
        podgroup_model.PodGroupSpec.model_validate({"minMember": -1})
    with pytest.raises(pydantic.ValidationError, match="weight"):
        queue_model.QueueSpec.model_validate({"weight": 70000})
