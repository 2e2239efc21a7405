"""CRDs are generated from the models, match Volcano's shape, and the committed files are fresh."""

from __future__ import annotations

import json
import pathlib

import pytest

from bridge import crdgen
from bridge.models import command as command_model
from bridge.models import podgroup as podgroup_model
from bridge.models import queue as queue_model

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _schema(info: object) -> dict[str, object]:
    doc = crdgen.manifest(info)  # type: ignore[arg-type]
    return doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]


def test_committed_crds_are_up_to_date() -> None:
    assert crdgen.check(ROOT / "crds") == [], "run `vbridge dev crds --write`"


@pytest.mark.parametrize("info", crdgen.ALL, ids=lambda i: i.kind)
def test_schema_is_structural(info: object) -> None:
    text = json.dumps(_schema(info))
    assert "$ref" not in text and '"title"' not in text and '"null"' not in text


def test_podgroup_has_every_volcano_field_and_column() -> None:
    spec = _schema(podgroup_model.CRD)["properties"]["spec"]["properties"]  # type: ignore[index]
    assert set(spec) == {
        "minMember",
        "minTaskMember",
        "queue",
        "priorityClassName",
        "minResources",
        "networkTopology",
        "subGroupPolicy",
    }
    assert spec["queue"]["default"] == "default"
    assert spec["minMember"]["minimum"] == 0
    assert spec["minResources"]["additionalProperties"]["x-kubernetes-int-or-string"] is True
    assert spec["networkTopology"]["properties"]["mode"]["enum"] == ["hard", "soft"]
    sub = spec["subGroupPolicy"]["items"]["properties"]
    assert set(sub) == {"name", "networkTopology", "subGroupSize", "minSubGroups", "labelSelector", "matchLabelKeys"}
    status = _schema(podgroup_model.CRD)["properties"]["status"]["properties"]  # type: ignore[index]
    assert set(status) == {"phase", "conditions", "running", "succeeded", "failed"}
    assert status["phase"]["enum"] == ["Pending", "Running", "Unknown", "Inqueue", "Completed"]
    assert set(status["conditions"]["items"]["properties"]) == {
        "type",
        "status",
        "transitionID",
        "lastTransitionTime",
        "reason",
        "message",
    }
    doc = crdgen.manifest(podgroup_model.CRD)
    version = doc["spec"]["versions"][0]
    assert doc["spec"]["names"]["shortNames"] == ["pg", "podgroup-v1beta1"]
    assert doc["spec"]["scope"] == "Namespaced" and version["subresources"] == {}
    assert [(c["name"], c["jsonPath"], c.get("priority", 0)) for c in version["additionalPrinterColumns"]] == [
        ("STATUS", ".status.phase", 0),
        ("minMember", ".spec.minMember", 0),
        ("RUNNINGS", ".status.running", 0),
        ("AGE", ".metadata.creationTimestamp", 0),
        ("QUEUE", ".spec.queue", 1),
    ]


def test_queue_is_cluster_scoped_with_status_and_volcano_fields() -> None:
    doc = crdgen.manifest(queue_model.CRD)
    assert doc["spec"]["scope"] == "Cluster"
    assert doc["spec"]["names"]["shortNames"] == ["q", "queue-v1beta1"]
    assert doc["spec"]["versions"][0]["subresources"] == {"status": {}}
    spec = _schema(queue_model.CRD)["properties"]["spec"]["properties"]  # type: ignore[index]
    assert {
        "weight",
        "capability",
        "reclaimable",
        "guarantee",
        "deserved",
        "parent",
        "affinity",
        "priority",
        "dequeueStrategy",
        "extendClusters",
        "type",
    } == set(spec)
    assert (spec["weight"]["minimum"], spec["weight"]["maximum"], spec["weight"]["default"]) == (1, 65535, 1)
    status = _schema(queue_model.CRD)["properties"]["status"]["properties"]  # type: ignore[index]
    assert {"state", "pending", "inqueue", "running", "unknown", "completed", "allocated", "reservation"} == set(status)


def test_check_reports_a_stale_file(tmp_path: pathlib.Path) -> None:
    crdgen.write(tmp_path)
    assert crdgen.check(tmp_path) == []
    (tmp_path / "scheduling.volcano.sh_queues.yaml").write_text("stale")
    assert crdgen.check(tmp_path) == ["scheduling.volcano.sh_queues.yaml"]


def test_command_has_volcanos_top_level_fields_and_no_spec_or_status() -> None:
    doc = crdgen.manifest(command_model.CRD)
    assert doc["metadata"]["name"] == "commands.bus.volcano.sh" and doc["spec"]["scope"] == "Namespaced"
    schema = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    assert set(schema) == {"apiVersion", "kind", "metadata", "action", "target", "reason", "message"}
    target = schema["target"]
    assert set(target["properties"]) == {"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}
    assert target["required"] == ["apiVersion", "kind", "name", "uid"]
    assert target["x-kubernetes-map-type"] == "atomic"
