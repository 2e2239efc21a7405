"""Cluster faults under running and pending gangs: ``minMember`` raised while a gang waits, a queue
closed under pending and running groups, a running gang's member deleted, and the node under a
running Volcano Job deleted.

The bridge (webhooks, reconcilers, the Volcano Job controller) and the scheduler run as threads
against the suite's own control plane; the node simulator finishes pods. Verdicts are counted
from the apiserver (``tests.support.accounting``) or waited on as recorded scheduler cycles.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from scheduler import configure
from tests.builders import vcjob
from tests.reliability import conftest
from tests.support import accounting, apiserver, bridgethread, schedbed, schedthread, simthread
from vbridge.controllers import commands as command_controller
from vbridge.localcluster import cluster
from vbridge.nodesim import nodes

pytestmark = [pytest.mark.reliability, pytest.mark.integration]
NAME = "rel-cluster"
JOB_LABEL = "volcano.sh/job-name"


def untaint(api: k8s.ApiClient, specs: list[nodes.NodeSpec]) -> None:
    for spec in specs:
        k8s.CoreV1Api(api).patch_node(spec.name, {"spec": {"taints": None}})


@pytest.fixture(scope="module")
def bed(rlc: cluster.LocalCluster, rapi: k8s.ApiClient) -> Iterator[schedthread.SchedThread]:
    specs = nodes.pool(2, prefix="cl-" + uuid.uuid4().hex[:4], cpu="8", memory="32Gi")
    sim = simthread.SimThread(rlc.kubeconfig, specs, default_run_seconds=2.0).start()
    untaint(rapi, specs)
    bridge = bridgethread.BridgeThread(rlc, scheduler_name=NAME).start()
    sched = schedthread.SchedThread(rlc, configure.parse("", scheduler_name=NAME), name="cluster-sched")
    sched.start()
    try:
        yield sched
    finally:
        sched.stop()
        bridge.stop()
        sim.stop()
        for spec in specs:
            k8s.CoreV1Api(rapi).delete_node(spec.name)


def cached_min_member(sched: schedthread.SchedThread, key: str) -> int:
    obj = sched.scheduler.cache.store["podgroups"].get(key) if sched.scheduler is not None else None
    return int(((obj or {}).get("spec") or {}).get("minMember") or 0)


@pytest.mark.timeout(180)
def test_r13_min_member_raised_while_the_gang_is_pending(
    bed: schedthread.SchedThread, rapi: k8s.ApiClient, rns: str, observe: conftest.Observe
) -> None:
    """A gang of minMember 2 has one pod; minMember is raised to 4; then two more pods arrive (3:
    enough under the old minimum, not the new): nothing is bound; the fourth binds all four."""
    schedbed.podgroup(rapi, rns, "m", 2)
    schedbed.pods(rapi, rns, "m", 1, scheduler=NAME, cpu="500m", prefix="m-a", run_seconds=120.0)
    body = {"spec": {"minMember": 4}}
    k8s.CustomObjectsApi(rapi).patch_namespaced_custom_object(*apiserver.PG, rns, "podgroups", "m", body)
    apiserver.eventually(lambda: cached_min_member(bed, f"{rns}/m") == 4, 30, "the scheduler sees minMember 4")
    more = schedbed.pods(rapi, rns, "m", 2, scheduler=NAME, cpu="500m", prefix="m-b", run_seconds=120.0)
    apiserver.eventually(lambda: bed.sees(schedbed.keys(rns, more)), 30, "the scheduler sees 3 pods")
    quiet = bed.cycles.next(3)
    assert not schedbed.bound(rapi, rns, "m"), "3 of a gang of 4 were bound"
    schedbed.pods(rapi, rns, "m", 1, scheduler=NAME, cpu="500m", prefix="m-c", run_seconds=120.0)
    apiserver.eventually(lambda: len(schedbed.bound(rapi, rns, "m")) == 4, 60, "the 4 bound once the 4th exists")
    tally = accounting.count(rapi, [rns])
    assert not tally.partial() and not tally.double_binds, tally
    observe(
        f"minMember 2 -> 4 with 1 pod: 3 pods left unbound over {len(quiet)} cycles, all 4 bound with the 4th; "
        "0 partial, 0 double binds"
    )


def close_queue(lc: cluster.LocalCluster, name: str) -> str:
    async def close() -> str:
        from bridge.k8s import client, kubeconfigs

        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
            return await command_controller.operate_queue(api, name, "CloseQueue")

    return cluster.run_sync(close())


def created(make: Callable[[], object]) -> bool:
    """Whether ``make()`` was admitted; False while the webhook's queue facts lag (a 403 naming the queue)."""
    try:
        make()
    except k8s.ApiException as exc:
        if exc.status != 403 or "does not exist" not in str(exc.body):
            raise
        return False
    return True


@pytest.mark.timeout(180)
def test_r18_queue_closed_under_pending_and_running_groups(
    rlc: cluster.LocalCluster, bed: schedthread.SchedThread, rapi: k8s.ApiClient, rns: str, observe: conftest.Observe
) -> None:
    """In queue q gang r runs and gang p (minMember 3, 2 of its pods) waits. The queue is closed
    (as ``vcctl queue close`` does): it is Closing while it has groups. r keeps running; a new
    PodGroup or Volcano Job naming q is refused at admission, or, made anyway, is held: never
    bound. Once r and p are gone the queue is Closed."""
    queue = "rq-" + rns[-6:]
    schedbed.queue(rapi, queue, 1)
    crd = k8s.CustomObjectsApi(rapi)
    try:
        make_r = lambda: schedbed.podgroup(rapi, rns, "r", 2, queue=queue)  # noqa: E731
        apiserver.eventually(lambda: created(make_r), 30, "gang r's PodGroup admitted")
        schedbed.pods(rapi, rns, "r", 2, scheduler=NAME, cpu="500m", run_seconds=600.0)
        apiserver.eventually(lambda: schedbed.phase(rapi, rns, "r") == "Running", 60, "gang r Running")
        schedbed.podgroup(rapi, rns, "p", 3, queue=queue)
        schedbed.pods(rapi, rns, "p", 2, scheduler=NAME, cpu="500m")
        state = close_queue(rlc, queue)
        assert state == "Closing", state
        body = vcjob.simple("late", 1, queue=queue)
        body["spec"]["schedulerName"] = NAME

        def refused(make: Callable[[], object]) -> str | None:
            try:
                make()
            except k8s.ApiException as exc:
                return f"{exc.status} {exc.body}"
            return None

        job = lambda: crd.create_namespaced_custom_object(*accounting.VC, rns, "jobs", body, dry_run="All")  # noqa: E731
        job_refusal = apiserver.eventually(lambda: refused(job), 30, "a new job in the closed queue denied")
        assert "Closing" in job_refusal, job_refusal
        group_refusal = refused(lambda: schedbed.podgroup(rapi, rns, "n", 1, queue=queue))
        if group_refusal is None:  # made anyway: held, never bound
            held = schedbed.pods(rapi, rns, "n", 1, scheduler=NAME, cpu="500m")
            apiserver.eventually(lambda: bed.sees(schedbed.keys(rns, held)), 30, "the scheduler sees the new pod")
            bed.cycles.next(3)
            assert not schedbed.bound(rapi, rns, "n"), "a new group of a closed queue was bound"
        assert len(schedbed.bound(rapi, rns, "r")) == 2 and schedbed.phase(rapi, rns, "r") == "Running"
        for group in ("r", "p", "n"):
            try:
                crd.delete_namespaced_custom_object(*apiserver.PG, rns, "podgroups", group)
            except k8s.ApiException as exc:
                if exc.status != 404:
                    raise
        k8s.CoreV1Api(rapi).delete_collection_namespaced_pod(rns, grace_period_seconds=0)

        def closed() -> bool:
            status = crd.get_cluster_custom_object(*apiserver.PG, "queues", queue).get("status") or {}
            return status.get("state") == "Closed"

        apiserver.eventually(closed, 60, "the drained queue Closed")
    finally:
        crd.delete_cluster_custom_object(*apiserver.PG, "queues", queue)
    new_group = "refused " + group_refusal.split(" ", 1)[0] if group_refusal else "held, never bound over 3 cycles"
    observe(
        "queue closed under gang r Running and gang p waiting: Closing; r kept its 2 pods Running; a new Volcano "
        f"Job refused ({job_refusal.split(' ', 1)[0]}, queue Closing); a new PodGroup {new_group}; Closed once "
        "drained"
    )


def job_pods(api: k8s.ApiClient, ns: str, job: str) -> list[Any]:
    return list(k8s.CoreV1Api(api).list_namespaced_pod(ns, label_selector=f"{JOB_LABEL}={job}").items)


def job_status(api: k8s.ApiClient, ns: str, job: str) -> dict[str, Any]:
    obj = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*accounting.VC, ns, "jobs", job)
    return dict(obj.get("status") or {})


def running_on(api: k8s.ApiClient, ns: str, job: str, count: int) -> dict[str, str] | None:
    """uid -> node of the job's pods once ``count`` of them run (none being deleted)."""
    pods = [p for p in job_pods(api, ns, job) if p.metadata.deletion_timestamp is None]
    up = {p.metadata.uid: p.spec.node_name for p in pods if p.status.phase == "Running"}
    return up if len(up) == count else None


def submit(api: k8s.ApiClient, ns: str, name: str, *, queue: str = "default", **kwargs: Any) -> None:
    body = vcjob.simple(name, 3, queue=queue, **kwargs)
    body["spec"]["schedulerName"] = NAME
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(*accounting.VC, ns, "jobs", body)


def group_of(api: k8s.ApiClient, ns: str, job: str) -> str:
    pods = job_pods(api, ns, job)
    return str(pods[0].metadata.annotations[apiserver.GROUP_NAME])


@pytest.mark.timeout(240)
def test_r20_a_running_gangs_member_deleted(
    bed: schedthread.SchedThread, rapi: k8s.ApiClient, rns: str, observe: conftest.Observe
) -> None:
    """A Volcano Job of 3 with the policy PodEvicted -> RestartJob runs; one member is deleted.
    While it terminates and the job restarts, its PodGroup stays admitted: Running, Unknown (some
    members run, fewer than minMember: Volcano's ``getPodGroupPhase``) or Inqueue (every old pod
    gone, the new ones not yet bound), never back to Pending; the policy applies once (retryCount
    1, every pod replaced), the job completes, no pod is bound twice."""
    policies = [{"event": "PodEvicted", "action": "RestartJob"}]
    submit(rapi, rns, "evict", run_seconds=15.0, policies=policies, max_retry=3)
    first = apiserver.eventually(lambda: running_on(rapi, rns, "evict", 3), 90, "the job's 3 pods running")
    group = group_of(rapi, rns, "evict")
    victim = next(p for p in job_pods(rapi, rns, "evict") if p.metadata.uid in first)
    k8s.CoreV1Api(rapi).delete_namespaced_pod(victim.metadata.name, rns)
    phases: list[str] = []

    def restarted() -> dict[str, str] | None:
        phases.append(str(schedbed.phase(rapi, rns, group)))
        return running_on(rapi, rns, "evict", 3) if job_status(rapi, rns, "evict").get("retryCount") else None

    second = apiserver.eventually(restarted, 90, "the job restarted by its policy, its pods running")
    assert "Pending" not in phases, f"the PodGroup lost its admission: {phases}"
    assert not set(second) & set(first), "a pod survived the RestartJob"
    apiserver.eventually(
        lambda: accounting.job_phase({"status": job_status(rapi, rns, "evict")}) == "Completed", 90, "job Completed"
    )
    assert int(job_status(rapi, rns, "evict").get("retryCount") or 0) == 1, job_status(rapi, rns, "evict")
    tally = accounting.count(rapi, [rns])
    assert not tally.double_binds and not tally.orphan_pods and not tally.orphan_groups, tally
    seen = ", ".join(f"{p} x{phases.count(p)}" for p in sorted(set(phases)))
    observe(
        f"member {victim.metadata.name} deleted: PodGroup phases sampled until the restart ran: {seen} (never "
        "Pending); PodEvicted -> RestartJob once (retryCount 1), 3 new pods, job Completed; 0 double binds, "
        "0 orphans"
    )


@pytest.mark.timeout(300)
def test_r21_the_node_under_a_running_volcano_job_deleted(
    rlc: cluster.LocalCluster, bed: schedthread.SchedThread, rapi: k8s.ApiClient, rns: str, observe: conftest.Observe
) -> None:
    """A Volcano Job of 3 (PodEvicted -> RestartJob) runs in queue q on two nodes of its own
    (nodeSelector); the node under one of its pods is lost: its simulated kubelet stops and
    its Node object is deleted. kube-controller-manager's pod
    garbage collector deletes the pods bound to the missing node (after its 40 s quarantine);
    the job restarts and runs whole on the node left, completes, and the queue holds nothing
    afterwards (no reservation leaks on the deleted node)."""
    tag = "r21-" + rns[-6:]
    specs = nodes.pool(2, prefix=tag, cpu="4", memory="16Gi", labels=(("rel-r21", tag),))
    sims = {spec.name: simthread.SimThread(rlc.kubeconfig, [spec], default_run_seconds=2.0).start() for spec in specs}
    untaint(rapi, specs)
    queue = "q" + tag
    schedbed.queue(rapi, queue, 1)
    crd = k8s.CustomObjectsApi(rapi)
    try:
        body = vcjob.simple("lost", 3, run_seconds=20.0, queue=queue, max_retry=3)
        body["spec"]["policies"] = [{"event": "PodEvicted", "action": "RestartJob"}]
        body["spec"]["schedulerName"] = NAME
        body["spec"]["tasks"][0]["template"]["spec"]["nodeSelector"] = {"rel-r21": tag}
        make = lambda: crd.create_namespaced_custom_object(*accounting.VC, rns, "jobs", body)  # noqa: E731
        apiserver.eventually(lambda: created(make), 30, "the job admitted once the webhook knows its queue")
        first = apiserver.eventually(lambda: running_on(rapi, rns, "lost", 3), 90, "the job's 3 pods running")
        doomed = sorted(first.values())[0]
        t0 = time.monotonic()
        sims[doomed].stop()  # the node is lost: its kubelet gone, then its Node object
        k8s.CoreV1Api(rapi).delete_node(doomed)

        def again() -> dict[str, str] | None:
            now = running_on(rapi, rns, "lost", 3)
            return now if now and not set(now) & set(first) else None

        second = apiserver.eventually(again, 150, "the job running again with new pods")
        recovered = time.monotonic() - t0
        assert set(second.values()) == {s.name for s in specs} - {doomed}, second
        assert int(job_status(rapi, rns, "lost").get("retryCount") or 0) >= 1
        apiserver.eventually(
            lambda: accounting.job_phase({"status": job_status(rapi, rns, "lost")}) == "Completed", 90, "Completed"
        )

        def held() -> dict[str, Any]:
            status = crd.get_cluster_custom_object(*apiserver.PG, "queues", queue).get("status") or {}
            return {k: v for k, v in (status.get("allocated") or {}).items() if v not in (None, "0")}

        apiserver.eventually(lambda: held() == {}, 60, "the queue holding nothing once the job is done")
        tally = accounting.count(rapi, [rns])
        assert not tally.double_binds and not tally.orphan_pods, tally
    finally:
        for thread in sims.values():
            thread.stop()
        for spec in specs:
            try:
                k8s.CoreV1Api(rapi).delete_node(spec.name)
            except k8s.ApiException as exc:
                if exc.status != 404:
                    raise
        try:
            crd.delete_namespaced_custom_object(*accounting.VC, rns, "jobs", "lost")
        except k8s.ApiException as exc:
            if exc.status != 404:
                raise
        crd.delete_cluster_custom_object(*apiserver.PG, "queues", queue)
    observe(
        f"node {doomed} deleted under the job: its pods garbage-collected, RestartJob, the 3 pods running on the "
        f"node left {recovered:.0f} s later; job Completed; queue allocation back to nothing; 0 double binds"
    )
