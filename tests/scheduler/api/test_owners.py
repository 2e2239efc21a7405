"""Who creates a PodGroup's pods, named by the kind that owns it (``scheduler.api.owners``)."""

from __future__ import annotations

import pytest

from scheduler.api import owners as creators


@pytest.mark.parametrize("kind", ["TFJob", "PyTorchJob", "XGBoostJob", "PaddleJob", "JAXJob"])
def test_the_training_operators_kinds_name_it(kind: str) -> None:
    assert creators.creator((kind, "j")) == "the Kubeflow training-operator has not created them"


def test_an_unknown_owner_is_named_itself() -> None:
    assert creators.creator(("Widget", "w")) == "its owner, Widget w, has not created them"
