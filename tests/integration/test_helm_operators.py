"""The chart's standalone install (the default values) running the real operators' seed jobs.

On the bed of ``besidevolcano.running(external=False)``: the helm bed (two runtime nodes in
network namespaces for the chart's pods, placed by the built kube-scheduler; three plain
simulated nodes of 8 cpu for the workloads) and the real training-operator (TFJob), mpi-operator
and spark-operator with their default gang flags (none), no Volcano:

1. ``helm install`` with the default mode into a namespace enforcing Pod Security
   ``restricted``: webhook, controllers and scheduler Ready;
2. the seed SparkApplication, TFJob and MPIJob (``examples/``, unchanged but for the namespace),
   submitted to the operators: each gets one PodGroup, ours, owned by the job; every pod is bound
   by the chart's scheduler (the audit log's ``pods/binding`` creates are all by its
   ServiceAccount) and the operators see the jobs through to success;
3. the table of what ran; the apiserver refused our ServiceAccounts nothing;
4. failover: the controllers' leader SIGKILLed right after a Volcano Job is created; the other
   replica holds the Lease within the chart's lease duration, and the job's pods are made once.
"""

from __future__ import annotations

import os
import pathlib
import signal
import time
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from bridge import defaults
from tests.support import apiserver, besidevolcano, helmbed, helminstall, operatorseeds
from vbridge.localcluster import binaries

pytestmark = [pytest.mark.integration, pytest.mark.operators]
OURS = f"system:serviceaccount:{helmbed.NS}:{helmbed.RELEASE}-scheduler"


@pytest.fixture(scope="module")
def env(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[besidevolcano.Beside]:
    with besidevolcano.running(bins, tmp_path_factory.mktemp("helm-operators"), external=False) as out:
        yield out


@pytest.mark.timeout(300)
def test_standalone_install_is_ready_under_restricted_pod_security(env: besidevolcano.Beside) -> None:
    bed = env.bed
    labels = {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
    }
    k8s.CoreV1Api(bed.api).create_namespace({"metadata": {"name": helmbed.NS, "labels": labels}})
    started = time.monotonic()
    bed.helm("install", helmbed.RELEASE, str(helmbed.CHART), "-n", helmbed.NS, "-f", str(bed.values))
    replicas = {"webhook": 2, "controllers": 2, "scheduler": 2}
    pods = helmbed.eventually_diagnosed(
        bed, lambda: helmbed.all_ready(bed, replicas), 120, "every Deployment Available, every pod Ready"
    )
    print(f"\nstandalone with the operators: every pod Ready {time.monotonic() - started:.1f} s after helm install")
    assert all(c.restart_count == 0 for p in pods for c in p.status.container_statuses)
    env.recorder.start()  # the PodGroup CRD is the chart's: watched from now on


@pytest.mark.timeout(600)
def test_the_operators_seed_jobs_are_gang_scheduled_by_the_charts_scheduler(env: besidevolcano.Beside) -> None:
    bed = env.bed
    records = operatorseeds.run(env)
    by_audit = besidevolcano.binders(bed.lc, besidevolcano.WORK)
    rows = []
    for r in records:
        users = set().union(*(by_audit.get(n, set()) for n in r["names"]))
        assert users == {OURS}, (r["kind"], {n: by_audit.get(n) for n in r["names"]})
        times = r["times"]
        rows.append(
            {
                "kind": r["kind"],
                "PodGroup": r["group"],
                "phases (watched)": " > ".join(env.recorder.phases(r["group"])),
                "pods bound": f"{len(r['names'])}/{len(r['names'])}",
                "binding user": ",".join(sorted(users)).rsplit(":", 1)[-1],
                "create > all bound": f"{times[-1] - r['created']:.1f} s",
            }
        )
    print("\n" + besidevolcano.table(rows))
    assert set().union(*by_audit.values()) == {OURS}
    ours = f"system:serviceaccount:{helmbed.NS}:"
    denied = [line for line in helminstall.forbidden(helminstall.audit_events(bed.lc)) if line.startswith(ours)]
    assert denied == [], denied


@pytest.mark.timeout(300)
def test_the_controllers_leader_killed_mid_reconcile_is_replaced_within_the_lease(env: besidevolcano.Beside) -> None:
    """SIGKILL (no Lease handed back) to the leading controllers process right after a Volcano
    Job is created: the standby takes the Lease within its duration (the chart's defaults), and
    the job gets its pods once each (none made twice) and completes."""
    bed = env.bed
    leases = k8s.CoordinationV1Api(bed.api)

    def holder() -> str:
        return str(leases.read_namespaced_lease(defaults.CONTROLLERS_LEASE, helmbed.NS).spec.holder_identity or "")

    before = holder()
    pid = int(before.rsplit("_", 1)[1])  # "<host name>_<pid>"; the runtime's processes share the host's pids
    assert "controllers" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0"), before
    job = k8s.CustomObjectsApi(bed.api).create_namespaced_custom_object(
        *helmbed.VC, besidevolcano.WORK, "jobs", helmbed.mpi_job()
    )
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()

    def taken() -> str | None:
        now = holder()
        return now if now and now != before else None

    after = apiserver.eventually(taken, 30, "another holder of the Lease")
    took = time.monotonic() - killed
    bed.notes["failover"] = took
    # Either the other replica or the killed pod's restarted process (a new pid): not the dead one.
    assert not after.endswith(f"_{pid}"), (before, after)
    print(f"\ncontrollers failover: {before} SIGKILLed; {after} holds the Lease {took:.1f} s later")
    assert took <= defaults.LEASE_SECONDS + 2 * defaults.RETRY_SECONDS + 1.0
    apiserver.eventually(lambda: helmbed.phase(bed, "lm-mpi-job") == "Completed", 120, "the Volcano Job Completed")
    # Each of its 3 pods made once: 3 distinct pods ever bound, none replaced, one PodGroup.
    binds = env.recorder.binds({"volcano.sh/job-name": "lm-mpi-job"})
    assert len(binds) == 3, sorted(binds)
    assert len({b.pod["metadata"]["uid"] for b in binds.values()}) == 3
    group = f"lm-mpi-job-{job['metadata']['uid']}"
    assert env.recorder.group(group) is not None
