"""The training-operator run with chosen schemes: only their CRDs and their validating webhooks."""

from __future__ import annotations

from typing import Any

import pytest

from bridge import errors
from vbridge.localcluster import cluster, operators, trainingwebhook


def crd(plural: str) -> dict[str, Any]:
    return {"metadata": {"name": f"{plural}.kubeflow.org"}, "spec": {"names": {"plural": plural}}}


def hook(plural: str) -> dict[str, Any]:
    return {"name": f"validator.{plural}", "rules": [{"resources": [plural]}]}


def test_schemes_keep_only_their_crds() -> None:
    docs = [crd("tfjobs"), crd("pytorchjobs"), crd("mpijobs")]
    assert [d["spec"]["names"]["plural"] for d in operators.of_schemes(docs, ("TFJob",))] == ["tfjobs"]
    assert operators.of_schemes(docs, ()) == docs


def test_schemes_keep_only_their_webhooks() -> None:
    config = {"metadata": {"name": "v"}, "webhooks": [hook("tfjobs"), hook("pytorchjobs"), hook("jaxjobs")]}
    kept = trainingwebhook.only(config, ("tfjob", "jaxjob"))
    assert [h["name"] for h in kept["webhooks"]] == ["validator.tfjobs", "validator.jaxjobs"]
    assert len(config["webhooks"]) == 3  # the module's own manifest is not changed
    assert trainingwebhook.only(config, ()) is config


def test_schemes_are_the_training_operators_only(tmp_path: Any) -> None:
    lc = cluster.LocalCluster(tmp_path)
    with pytest.raises(errors.ConfigError, match="enable-scheme"):
        operators.Operator("mpi-operator", lc, schemes=("tfjob",))
