"""Network faults between every component and the apiserver, through a real Toxiproxy.

The scheduler and the bridge (webhook facts, reconcilers, the Volcano Job controller) reach the
apiserver only through the proxy; the node simulator and the test's own client do not. Under
each fault, Volcano Jobs and plain PodGroups arrive; once the fault is lifted everything must
converge: every job Completed, every gang bound whole (its first minMember binds in one cycle),
no pod created or bound twice, no orphan.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.builders import vcjob
from tests.reliability import conftest
from tests.support import accounting, apiserver, gangcheck, proxiedbed, schedbed, schedthread, toxiproxy
from vbridge.localcluster import cluster

pytestmark = [pytest.mark.reliability, pytest.mark.integration]
NAME = "rel-net"


@pytest.fixture(scope="module")
def bed(
    rlc: cluster.LocalCluster, rapi: k8s.ApiClient, proxy: toxiproxy.Proxied
) -> Iterator[tuple[schedthread.SchedThread, gangcheck.BindLog]]:
    log = gangcheck.BindLog()
    with proxiedbed.running(
        rlc, rapi, proxy, name=NAME, prefix="net", on_cycle=log.record, run_seconds=2.0, cpu="4", memory="16Gi"
    ) as bed:
        yield bed.sched, log


def submit(api: k8s.ApiClient, ns: str, tag: str, count: int) -> list[str]:
    """``count`` Volcano Jobs and as many plain PodGroups with their pods; the PodGroups' names."""
    for i in range(count):
        body = vcjob.simple(f"{tag}-job-{i}", 3, run_seconds=2.0)
        body["spec"]["schedulerName"] = NAME
        k8s.CustomObjectsApi(api).create_namespaced_custom_object(*accounting.VC, ns, "jobs", body)
        schedbed.podgroup(api, ns, f"{tag}-pg-{i}", 2)
        schedbed.pods(api, ns, f"{tag}-pg-{i}", 2, scheduler=NAME, run_seconds=2.0)
    return [f"{tag}-pg-{i}" for i in range(count)]


FAULTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "latency": [("latency", {"latency": 300, "jitter": 150})],
    "bandwidth": [("bandwidth", {"rate": 16})],  # 16 KB/s each way: a watch relist crawls
    "slow_close": [("slow_close", {"delay": 2000}), ("latency", {"latency": 50})],
}


@contextlib.contextmanager
def faults(proxy: toxiproxy.Proxied, chosen: list[tuple[str, dict[str, Any]]]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for kind, attributes in chosen:
            stack.enter_context(proxy.toxic(kind, both=True, **attributes))
        yield


def settle(api: k8s.ApiClient, ns: str, log: gangcheck.BindLog, groups: list[str], timeout: float) -> accounting.Tally:
    def done() -> accounting.Tally | None:
        tally = accounting.count(api, [ns])
        plain = [tally.groups.get(f"{ns}/{g}", (2, 0, ""))[1] for g in groups]
        return tally if not tally.unfinished() and all(b == 2 for b in plain) else None

    try:
        tally = apiserver.eventually(done, timeout, "every job Completed and every gang bound")
    except AssertionError as exc:
        last = accounting.count(api, [ns])
        raise AssertionError(f"{exc}: unfinished {last.unfinished()}, gangs {last.groups}") from None
    minimum = {g: m for g, (m, _, _) in tally.groups.items()}
    split = gangcheck.split_gangs(
        {k: v for k, v in log.binds(unanswered=True).items() if k.startswith(ns + "/")}, minimum
    )
    assert not split, split
    assert not tally.partial() and not tally.double_binds, (tally.partial(), tally.double_binds)
    assert not tally.orphan_pods and not tally.orphan_groups, (tally.orphan_pods, tally.orphan_groups)
    assert set(tally.jobs.values()) == {"Completed"}, tally.jobs
    return tally


@pytest.mark.timeout(300)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_degraded_links_slow_everything_and_lose_nothing(
    fault: str,
    bed: tuple[schedthread.SchedThread, gangcheck.BindLog],
    proxy: toxiproxy.Proxied,
    rapi: k8s.ApiClient,
    rns: str,
    observe: conftest.Observe,
) -> None:
    _, log = bed
    t0 = time.monotonic()
    with faults(proxy, FAULTS[fault]):
        groups = submit(rapi, rns, fault.replace("_", ""), 4)
        # The fault stays until gangs have been bound through it.
        apiserver.eventually(lambda: sum(k.startswith(rns + "/") for k in log.binds()) >= 8, 120, "binds under it")
    tally = settle(rapi, rns, log, groups, 150)
    observe(
        f"{fault}: {len(tally.jobs)} jobs Completed, {len(tally.groups)} gangs whole, {tally.pods} pods, "
        f"0 partial, 0 double binds, 0 orphans in {time.monotonic() - t0:.0f} s"
    )


@pytest.mark.timeout(300)
def test_reset_peer_and_timeouts_on_every_component_connection(
    bed: tuple[schedthread.SchedThread, gangcheck.BindLog],
    proxy: toxiproxy.Proxied,
    rapi: k8s.ApiClient,
    rns: str,
    observe: conftest.Observe,
) -> None:
    """While work arrives, three bursts of each: every connection reset (TCP RST), every
    connection black-holed (closed after 2 s), the proxy cut (connections dropped, new ones
    refused); the link works for 3 s between bursts. Everything converges once it is back."""
    _, log = bed
    t0 = time.monotonic()
    bursts = 0
    groups: list[str] = []
    for round_ in range(3):
        groups += submit(rapi, rns, f"burst{round_}", 2)
        for kind in ("reset_peer", "timeout", "cut"):
            if kind == "cut":
                proxy.cut()
            else:
                proxy.add(kind, stream="downstream", timeout=0 if kind == "reset_peer" else 2000)
                proxy.add(kind, stream="upstream", timeout=0 if kind == "reset_peer" else 2000)
            time.sleep(BURST_SECONDS)  # the fault's duration: nothing to wait for
            proxy.clear()
            bursts += 1
            time.sleep(3)  # the link between bursts, on purpose as short as this
    back = time.monotonic()
    tally = settle(rapi, rns, log, groups, 180)
    observe(
        f"{bursts} bursts of {BURST_SECONDS:.0f} s (reset_peer, timeout, cut) while 6 jobs and 6 gangs arrived: "
        f"{len(tally.jobs)} jobs Completed, {len(tally.groups)} gangs whole, 0 partial, 0 double binds, "
        f"0 orphans; converged {time.monotonic() - back:.0f} s after the last burst ({time.monotonic() - t0:.0f} s "
        f"in all); binds that failed and were retried: {len(log.failed())}"
    )


BURST_SECONDS = 4.0
