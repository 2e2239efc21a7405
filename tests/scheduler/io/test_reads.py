"""The scheduler's read views hold all it reads: snapshots and plans from pods and nodes decoded
through ``reads`` equal those from the whole objects, on the seeded mixed workloads with the
members an apiserver adds (managed fields, volumes, env, images, container statuses)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from scheduler import configure, cycle
from scheduler.api import building
from scheduler.io import reads
from tests.builders import scheduler as b
from tests.support import scenarios

MANAGED = [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]


def _as_served(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    """``obj`` with what the apiserver and the kubelet add that the scheduler never reads."""
    obj = copy.deepcopy(obj)
    obj["metadata"]["managedFields"] = MANAGED
    obj["metadata"]["resourceVersion"] = "7"
    if kind == "pod":
        obj["spec"]["volumes"] = [{"name": "token", "projected": {"sources": [{"serviceAccountToken": {}}]}}]
        for c in obj["spec"]["containers"]:
            c.update(image="busybox", env=[{"name": "A", "value": "1"}], terminationMessagePath="/dev/log")
        default = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
        obj["spec"].setdefault("tolerations", []).append({**default, "tolerationSeconds": 300})
        obj["status"]["containerStatuses"] = [{"name": "c", "ready": True, "restartCount": 0}]
        obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    else:
        obj["status"]["images"] = [{"names": ["busybox"], "sizeBytes": 1}]
        obj["status"]["nodeInfo"] = {"kubeletVersion": "v1.37.2"}
    return obj


def _decoded(objs: list[dict[str, Any]], view: Any) -> tuple[list[Any], list[Any]]:
    body = orjson.dumps({"kind": "List", "metadata": {"resourceVersion": "9"}, "items": objs})
    return orjson.loads(body)["items"], view.list(body)["items"]


@pytest.mark.parametrize("chunk", range(2))
def test_snapshots_from_the_read_views_equal_snapshots_from_whole_objects(chunk: int) -> None:
    for seed in range(chunk * 50, (chunk + 1) * 50):
        data = b.mixed_workload(seed)
        whole_pods, pods = _decoded([_as_served(p, "pod") for p in data["pods"]], reads.PODS)
        whole_nodes, nodes = _decoded([_as_served(n, "node") for n in data["nodes"]], reads.NODES)
        assert len(orjson.dumps(pods)) < len(orjson.dumps(whole_pods)) / 1.5  # the extras were left out
        full = building.build(**{**data, "pods": whole_pods, "nodes": whole_nodes})
        viewed = building.build(**{**data, "pods": pods, "nodes": nodes})
        assert viewed.tasks == full.tasks and viewed.nodes == full.nodes
        assert (viewed.used == full.used).all() and (viewed.allocatable == full.allocatable).all()
        conf = configure.parse(b.CONFS[seed % len(b.CONFS)])
        assert cycle.schedule(viewed, conf, scenarios.NOW) == cycle.schedule(full, conf, scenarios.NOW)


def test_watch_events_through_a_shape() -> None:
    pod = _as_served(b.pod("p", node="n1"), "pod")
    event = reads.PODS.event(orjson.dumps({"type": "MODIFIED", "object": pod}))
    assert event["type"] == "MODIFIED" and "managedFields" not in event["object"]["metadata"]
    assert event["object"]["spec"]["nodeName"] == "n1" and event["object"]["metadata"]["resourceVersion"] == "7"
    gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}}
    assert reads.PODS.event(orjson.dumps(gone)) == gone  # a Status, decoded whole
