"""The Helm chart installed with ``backend: native``: kube-scheduler places, our queues gate.

On the standalone helm bed (``helmstandalone.running(native=True)``): the control plane serves
the Workload API and kube-scheduler 1.37 runs with its gate as ``default-scheduler`` (it also
places the chart's own pods). ``helm install`` with ``backend: native``; every pod Ready. Then
the MPI seed through that install: the chart's webhook defaults the Job, its controllers make
the Volcano PodGroup and the native Workload and PodGroup and stamp the pods (kube-scheduler's
name, ``schedulingGroup``, our queue gate); the chart's scheduler (its queue half) admits the
group and lifts the gate; kube-scheduler binds the gang to the plain nodes; the Job completes.
"""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, helmbed, helmstandalone, nativebed

pytestmark = pytest.mark.integration


bed = helmstandalone.native_bed  # the fixture


@pytest.mark.timeout(420)
def test_a_native_install_runs_the_mpi_seed_bound_by_kube_scheduler_after_our_gate(bed: helmbed.Bed) -> None:
    core = k8s.CoreV1Api(bed.api)
    core.create_namespace({"metadata": {"name": helmbed.NS}})
    bed.helm(
        "install", helmbed.RELEASE, str(helmbed.CHART), "-n", helmbed.NS, "--create-namespace", "-f", str(bed.values)
    )
    replicas = {"webhook": 2, "controllers": 2, "scheduler": 2}
    helmbed.eventually_diagnosed(bed, lambda: helmbed.all_ready(bed, replicas), 120, "every pod Ready")
    args = [
        c.args
        for d in k8s.AppsV1Api(bed.api).list_namespaced_deployment(helmbed.NS).items
        for c in d.spec.template.spec.containers
    ]
    assert any("--backend=native" in (a or []) for a in args), args

    core.create_namespace({"metadata": {"name": helmbed.WORK}})
    job = helmbed.submit_mpi(bed)
    group = f"lm-mpi-job-{job['metadata']['uid']}"
    assert (
        apiserver.eventually(lambda: helmbed.podgroup(bed, group), 30, "the Volcano PodGroup")["spec"]["minMember"] == 3
    )
    native = apiserver.eventually(
        lambda: nativebed.native_podgroup(bed.api, helmbed.WORK, group), 30, "the native PodGroup"
    )
    assert native["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    pods = helmbed.eventually_diagnosed(
        bed, lambda: helmbed.bound(bed, "volcano.sh/job-name=lm-mpi-job", 3), 90, "the MPI gang to run"
    )
    for pod in pods:
        assert pod.spec.scheduler_name == "default-scheduler" and pod.spec.node_name in helmbed.PLAIN_NODES
        assert pod.spec.scheduling_group.pod_group_name == group
        assert not pod.spec.scheduling_gates  # our queue gate lifted by the chart's scheduler
    reporters = {
        e.involved_object.name: e.reporting_component
        for e in core.list_namespaced_event(helmbed.WORK, field_selector="reason=Scheduled").items
    }
    assert {reporters.get(p.metadata.name) for p in pods} == {"default-scheduler"}
    apiserver.eventually(lambda: helmbed.phase(bed, "lm-mpi-job") == "Completed", 60, "the Volcano Job Completed")
