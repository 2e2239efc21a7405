"""Only we lift our gates on the native backend, with our webhook up and down (``bridge.gates``).

The bed (``nativebed``): our webhooks and reconcilers on ``backend="native"``, our scheduler's
queue half, kube-scheduler 1.37, two nodes of 4 cpu; the local control plane has the gate policy
in force from its start, as the chart installs it. A namespace editor (``users.editor``: the
built-in ``edit`` role, reached by impersonation) tries to skip the queue with the pod ``patch``
right that role gives; every try is refused with a message naming the rule, while our own
components (the scheduler lifting the queue gate once the queue admits the group) go through.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import keys
from tests.builders import vcjob as builders_vcjob
from tests.support import apiserver, gatepolicy, nativebed, users
from vbridge.localcluster import binaries

pytestmark = pytest.mark.integration
NS = "gates"
LIFTED_ONLY_BY_US = "is lifted only by volcano-bridge"


@dataclasses.dataclass
class Bed:
    api: k8s.ApiClient
    user: str
    as_user: k8s.ApiClient


@pytest.fixture(scope="module")
def bed(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    workdir = tmp_path_factory.mktemp("gate-policy")
    with nativebed.started(bins, workdir, namespace=NS, prefix="gp", nodes_count=2, backend="native") as (lc, api):
        user, as_user = users.editor(api, lc, NS)
        try:
            yield Bed(api, user, as_user)
        finally:
            as_user.close()


def _refused(bed: Bed, name: str, ops: list[dict[str, Any]], expect: str | tuple[str, ...], mode: str) -> None:
    message = gatepolicy.refused(bed.as_user, NS, name, ops, expect, mode)
    assert bed.user in message or expect == gatepolicy.GROUP_FIXED, message


def _queue(api: k8s.ApiClient, name: str, cpu: str) -> None:
    body = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "capability": {"cpu": cpu}},
    }
    k8s.CustomObjectsApi(api).create_cluster_custom_object(*apiserver.PG, "queues", body)


def _job_pods(api: k8s.ApiClient, job: str) -> list[Any]:
    return list(k8s.CoreV1Api(api).list_namespaced_pod(NS, label_selector=f"volcano.sh/job-name={job}").items)


def test_an_editor_cannot_lift_the_queue_gate_and_our_scheduler_still_does(bed: Bed) -> None:
    queue = f"narrow-{uuid.uuid4().hex[:6]}"
    _queue(bed.api, queue, cpu="1")  # the job needs 2: over the queue's capability
    job = builders_vcjob.simple("over", 2, run_seconds=3600, queue=queue, cpu="1")
    k8s.CustomObjectsApi(bed.api).create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", NS, "jobs", job)
    pods = apiserver.eventually(lambda: (p := _job_pods(bed.api, "over")) and len(p) == 2 and p, what="the pods")
    names = [p.metadata.name for p in pods]
    group = pods[0].metadata.annotations[keys.GROUP_NAME]

    def held() -> bool:  # our scheduler saw the group and keeps it: over capability
        pg = k8s.CustomObjectsApi(bed.api).get_namespaced_custom_object(*apiserver.PG, NS, "podgroups", group)
        conds = (pg.get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Unschedulable" and c.get("status") == "True" for c in conds)

    apiserver.eventually(held, timeout=60, what="our scheduler holding the group over its queue's capability")

    def tries(mode: str) -> None:
        for name in names:
            ops = gatepolicy.lift(bed.api, NS, name, keys.QUEUE_GATE)
            _refused(bed, name, ops, LIFTED_ONLY_BY_US, mode)
            _refused(bed, name, gatepolicy.set_annotation(keys.GROUP_NAME, "another-group"), "stay as admitted", mode)
            _refused(bed, name, gatepolicy.set_annotation(keys.QUEUE_NAME, "default"), "stay as admitted", mode)
            _refused(bed, name, gatepolicy.set_group(None), gatepolicy.GROUP_FIXED, mode)

    gatepolicy.each_mode(bed.api, NS, tries)
    for pod in _job_pods(bed.api, "over"):
        assert keys.QUEUE_GATE in [g.name for g in pod.spec.scheduling_gates or []] and not pod.spec.node_name

    # Room in the queue: our scheduler lifts the gate (the policy lets it) and kube-scheduler binds.
    body = {"spec": {"capability": {"cpu": "4"}}}
    k8s.CustomObjectsApi(bed.api).patch_cluster_custom_object(*apiserver.PG, "queues", queue, body)

    def bound() -> bool:
        found = _job_pods(bed.api, "over")
        return len(found) == 2 and all(p.spec.node_name and not p.spec.scheduling_gates for p in found)

    apiserver.eventually(bound, timeout=120, what="our scheduler lifting the gate, kube-scheduler binding the gang")


def test_an_editor_cannot_lift_the_spark_driver_gates(bed: Bed) -> None:
    made = gatepolicy.driver(bed.as_user, NS, "pi-driver")
    gates = [g["name"] for g in made["spec"]["schedulingGates"]]
    assert keys.SPARK_GATE in gates and keys.QUEUE_GATE in gates, gates
    assert made["spec"]["schedulingGroup"] == {"podGroupName": gatepolicy.OTHERS_GROUP}

    def tries(mode: str) -> None:
        for gate in (keys.SPARK_GATE, keys.QUEUE_GATE):
            _refused(bed, "pi-driver", gatepolicy.lift(bed.api, NS, "pi-driver", gate), LIFTED_ONLY_BY_US, mode)
        # a group the controllers would make and lift for at once
        routed = gatepolicy.set_annotation(keys.GROUP_NAME, "spark-0123-podgroup")
        _refused(bed, "pi-driver", routed, "stay as admitted", mode)
        _refused(bed, "pi-driver", gatepolicy.set_group("someone-elses"), gatepolicy.GROUP_FIXED, mode)

    gatepolicy.each_mode(bed.api, NS, tries)
    assert set(gatepolicy.gates_of(bed.api, NS, "pi-driver")) == set(gates)
    # the policy is no wider than that: the editor still labels the gated pod
    assert (
        gatepolicy.refusal(bed.as_user, NS, "pi-driver", [{"op": "add", "path": "/metadata/labels/x", "value": "y"}])
        is None
    )


def test_an_editor_cannot_join_a_pod_of_theirs_to_a_native_group(bed: Bed) -> None:
    """A pod behind a gate of the user's own: joining a group is refused; lifting their own gate is not."""
    body = {
        "metadata": {"name": "sneak"},
        "spec": {"schedulingGates": [{"name": "example.com/hold"}], "containers": [{"name": "c", "image": "busybox"}]},
    }
    k8s.CoreV1Api(bed.as_user).create_namespaced_pod(NS, body)
    gatepolicy.each_mode(
        bed.api, NS, lambda mode: _refused(bed, "sneak", gatepolicy.set_group("a-gang"), gatepolicy.GROUP_FIXED, mode)
    )
    assert (
        gatepolicy.refusal(bed.as_user, NS, "sneak", gatepolicy.lift(bed.api, NS, "sneak", "example.com/hold")) is None
    )
    assert not k8s.CoreV1Api(bed.api).read_namespaced_pod("sneak", NS).spec.scheduling_group
