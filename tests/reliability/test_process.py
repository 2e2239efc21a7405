"""Process faults: the scheduler SIGKILLed during a gang's binds (in a loop), the apiserver down
for a minute, etcd restarted, the webhook gone while its registration stays.

Verdicts are counted from the apiserver (``tests.support.accounting``), never from what the
components believe.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from bridge import defaults
from scheduler import configure
from tests.builders import vcjob
from tests.reliability import conftest
from tests.support import (
    accounting,
    apiserver,
    bridgethread,
    budget,
    ctlproc,
    schedbed,
    schedthread,
    simthread,
    toxiproxy,
)
from vbridge import runtime
from vbridge.localcluster import certs as cluster_certs
from vbridge.localcluster import cluster, processes
from vbridge.nodesim import nodes

pytestmark = [pytest.mark.reliability, pytest.mark.integration]


@pytest.fixture(scope="module")
def sim(rlc: cluster.LocalCluster, rapi: k8s.ApiClient) -> Iterator[list[str]]:
    specs = nodes.pool(4, prefix="proc-" + uuid.uuid4().hex[:4], cpu="8", memory="32Gi", pods=200)
    thread = simthread.SimThread(rlc.kubeconfig, specs, default_run_seconds=1.0).start()
    for spec in specs:
        k8s.CoreV1Api(rapi).patch_node(spec.name, {"spec": {"taints": None}})
    try:
        yield [s.name for s in specs]
    finally:
        thread.stop()
        for spec in specs:
            k8s.CoreV1Api(rapi).delete_node(spec.name)


def bound_count(api: k8s.ApiClient, ns: str, prefix: str) -> int:
    return len(schedbed.bound(api, ns, prefix))


@pytest.mark.timeout(budget.KILL_LOOP * 20 + 120)
def test_r12_scheduler_sigkilled_mid_binds_in_a_loop(
    rlc: cluster.LocalCluster,
    rapi: k8s.ApiClient,
    rns: str,
    sim: list[str],
    proxy: toxiproxy.Proxied,
    tmp_path_factory: pytest.TempPathFactory,
    observe: conftest.Observe,
) -> None:
    """Each round: a gang of 12 arrives, a fresh ``vbridge scheduler`` process starts, and is
    SIGKILLed as soon as the apiserver shows the first of the gang's binds. The next process
    must finish what the dead one left (a previous gang cut in half) and never bind twice. The
    scheduler's requests reach the apiserver through the proxy 400 ± 400 ms late (latency on the
    way up: a latency on the way back only delays the answers, and every bind of a gang then
    lands at once), so a gang's binds land over most of a second and the kill falls among them;
    at least a quarter of the kills must find the gang cut short on the apiserver."""
    name = "kill-" + uuid.uuid4().hex[:6]
    logs = tmp_path_factory.mktemp("kill-logs")
    args = ["scheduler", f"--kubeconfig={proxy.kubeconfig}", f"--scheduler-name={name}", "--period=0.2"]
    slow = contextlib.ExitStack()
    slow.enter_context(proxy.toxic("latency", up=True, latency=400, jitter=400))
    size, mid_binds, t0 = 12, 0, time.monotonic()
    for i in range(budget.KILL_LOOP):
        schedbed.podgroup(rapi, rns, f"g{i}", size)
        schedbed.pods(rapi, rns, f"g{i}", size, scheduler=name, cpu="100m", run_seconds=1.0)
        proc = ctlproc.Proc(f"sched-{i}", args, logs)
        try:
            apiserver.eventually(
                lambda i=i: bound_count(rapi, rns, f"g{i}"), 60, f"round {i}: the gang's first bind", every=0.02
            )
        finally:
            proc.kill()
        at_kill = bound_count(rapi, rns, f"g{i}")
        mid_binds += at_kill < size  # the first bind is there (``first``), not all of them
    slow.close()
    final = ctlproc.Proc("sched-final", args, logs)
    try:
        total = budget.KILL_LOOP * size
        apiserver.eventually(
            lambda: sum(bound_count(rapi, rns, f"g{i}") for i in range(budget.KILL_LOOP)) == total,
            120,
            "every gang bound after the last restart",
        )
    finally:
        final.terminate()
    tally = accounting.count(rapi, [rns])
    assert not tally.partial() and not tally.double_binds, (tally.partial(), tally.double_binds)
    assert mid_binds >= budget.KILL_LOOP // 4, f"only {mid_binds} of {budget.KILL_LOOP} kills landed mid-gang"
    observe(
        f"{budget.KILL_LOOP} SIGKILLs, {mid_binds} of them mid-gang (some but not all of its binds on the apiserver "
        "right after the kill); at the end "
        f"{len(tally.groups)} gangs, {len(tally.partial())} partial, {len(tally.double_binds)} double binds, "
        f"{tally.pods} pods ({time.monotonic() - t0:.0f} s)"
    )


@pytest.fixture
def components(rlc: cluster.LocalCluster, sim: list[str]) -> Iterator[tuple[str, schedthread.SchedThread]]:
    name = "proc-" + uuid.uuid4().hex[:6]
    bridge = bridgethread.BridgeThread(rlc, scheduler_name=name).start()
    sched = schedthread.SchedThread(rlc, configure.parse("", scheduler_name=name), name="proc-sched").start()
    try:
        yield name, sched
    finally:
        sched.stop()
        bridge.stop()


def submit(api: k8s.ApiClient, ns: str, tag: str, scheduler: str) -> None:
    body = vcjob.simple(f"{tag}-job", 3, run_seconds=1.0)
    body["spec"]["schedulerName"] = scheduler
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(*accounting.VC, ns, "jobs", body)
    schedbed.podgroup(api, ns, f"{tag}-pg", 2)
    schedbed.pods(api, ns, f"{tag}-pg", 2, scheduler=scheduler, run_seconds=1.0)


def finished(api: k8s.ApiClient, ns: str, tags: list[str]) -> bool:
    tally = accounting.count(api, [ns])
    jobs_done = all(tally.jobs.get(f"{ns}/{t}-job") == "Completed" for t in tags)
    return jobs_done and all(bound_count(api, ns, f"{t}-pg") == 2 for t in tags)


def component(lc: cluster.LocalCluster, name: str) -> processes.Process:
    return next(p for p in lc.procs if p.name == name)


def ready(lc: cluster.LocalCluster) -> bool:
    return ctlproc.probe_tls(int(lc.server.rsplit(":", 1)[1]), "/readyz") == 200


@pytest.mark.timeout(budget.APISERVER_DOWN_SECONDS + 240)
def test_r15_r16_apiserver_down_60_s_then_back(
    rlc: cluster.LocalCluster,
    rapi: k8s.ApiClient,
    rns: str,
    components: tuple[str, schedthread.SchedThread],
    observe: conftest.Observe,
) -> None:
    name, sched = components
    submit(rapi, rns, "before", name)
    apiserver.eventually(lambda: finished(rapi, rns, ["before"]), 60, "the work before the outage")
    server = component(rlc, "kube-apiserver")
    server.stop()
    cycles_down = len(sched.reports)
    time.sleep(budget.APISERVER_DOWN_SECONDS)  # the outage itself: nothing to wait for
    server.start()
    apiserver.eventually(lambda: ready(rlc), 60, "the apiserver ready again")
    back = time.monotonic()
    submit(rapi, rns, "after", name)
    apiserver.eventually(lambda: finished(rapi, rns, ["after"]), 120, "new work done after the outage")
    recovered = time.monotonic() - back
    tally = accounting.count(rapi, [rns])
    assert not tally.double_binds and not tally.orphan_pods and not tally.partial(), tally
    assert tally.pods == 10, f"a replayed event made a pod twice: {tally.pods} pods for 2 jobs and 2 gangs"
    observe(
        f"apiserver down {budget.APISERVER_DOWN_SECONDS:.0f} s (scheduler ran {len(sched.reports) - cycles_down} "
        f"cycles meanwhile, same processes throughout): a new job and gang done {recovered:.1f} s after /readyz; "
        f"{tally.pods} pods for 2 jobs and 2 gangs, 0 double binds (watches resumed past the new watch cache's 410)"
    )


@pytest.mark.timeout(300)
def test_etcd_restarted_under_the_components(
    rlc: cluster.LocalCluster,
    rapi: k8s.ApiClient,
    rns: str,
    components: tuple[str, schedthread.SchedThread],
    observe: conftest.Observe,
) -> None:
    name, _ = components
    etcd = component(rlc, "etcd")
    etcd.stop()
    etcd.start()
    apiserver.eventually(lambda: ready(rlc), 60, "the apiserver ready with etcd back")
    back = time.monotonic()
    submit(rapi, rns, "etcd", name)
    apiserver.eventually(lambda: finished(rapi, rns, ["etcd"]), 120, "work done after etcd's restart")
    tally = accounting.count(rapi, [rns])
    assert not tally.double_binds and not tally.orphan_pods and tally.pods == 5, tally
    observe(f"etcd restarted: a new job and gang done {time.monotonic() - back:.1f} s after /readyz, 0 double binds")


@pytest.mark.timeout(120)
def test_r3_r24_webhook_down_ignore_kinds_pass_fail_kinds_denied(
    rlc: cluster.LocalCluster, rapi: k8s.ApiClient, rns: str, observe: conftest.Observe
) -> None:
    """The webhook registered at an address where nothing listens (its server is down)."""
    pki = cluster_certs.KeyPair(cert=rlc.workdir / "pki" / "ca.crt", key=rlc.workdir / "pki" / "ca.key")
    url = f"https://127.0.0.1:{cluster.free_port()}"
    cluster.run_sync(_register(rlc, url, pki.cert.read_bytes()))
    try:
        core = k8s.CoreV1Api(rapi)
        driver = {
            "metadata": {"name": "driver", "labels": {"spark-role": "driver"}},
            "spec": {"containers": [{"name": "c", "image": "spark"}]},
        }
        t0 = time.monotonic()
        core.create_namespaced_pod(rns, driver)  # Ignore: admitted as it is
        pod_seconds = time.monotonic() - t0
        t0 = time.monotonic()
        with pytest.raises(k8s.ApiException) as denied:
            k8s.CustomObjectsApi(rapi).create_namespaced_custom_object(*accounting.VC, rns, "jobs", vcjob.simple("j"))
        job_seconds = time.monotonic() - t0
        assert denied.value.status == 500 and "failed calling webhook" in str(denied.value.body), denied.value.body
        assert job_seconds < 5 + 1, "the denial took longer than timeoutSeconds"
        system = vcjob.simple("sys-" + uuid.uuid4().hex[:5])
        k8s.CustomObjectsApi(rapi).create_namespaced_custom_object(*accounting.VC, "kube-system", "jobs", system)
        k8s.CustomObjectsApi(rapi).delete_namespaced_custom_object(
            *accounting.VC, "kube-system", "jobs", system["metadata"]["name"]
        )
    finally:
        cluster.run_sync(_unregister(rlc))
    observe(
        f"webhook down: a Spark driver pod (Ignore) admitted in {pod_seconds:.2f} s; a Volcano Job (Fail) denied in "
        f"{job_seconds:.2f} s with 'failed calling webhook' (HTTP 500); a Volcano Job in kube-system admitted "
        f"(namespace excluded: the webhook is never called)"
    )


async def _register(lc: cluster.LocalCluster, url: str, ca: bytes) -> None:
    from bridge.k8s import client, kubeconfigs

    async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
        await runtime.register(api, url=url, ca_bundle=ca, scheduler_name=defaults.SCHEDULER_NAME)


async def _unregister(lc: cluster.LocalCluster) -> None:
    from bridge.k8s import client, kubeconfigs

    async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
        await runtime.unregister(api)
