"""A native twin the apiserver refuses is not created again on every event (issue 31, 5).

A control plane with the Workload API (``nativebed.plane``) and the native reconciler alone, with
a short backoff (``FIRST`` seconds doubled, at most ``MOST``). A Volcano PodGroup names a
PriorityClass that does not exist, so the apiserver refuses its Workload. The apiserver's own
count of Workload POSTs (``apiserver.calls``) shows: twenty events of the group (annotations,
its spec the same) send nothing; a change of its spec is tried at once and starts the backoff
over; the timer tries again only once the backoff has passed; a deleted group is never tried
again. The refusal stays recorded (the condition and one Event per message).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from bridge import keys
from bridge.k8s import client, kubeconfigs
from tests.support import apiserver, loopthread, nativebed
from vbridge.controllers import native as native_controller
from vbridge.localcluster import binaries, cluster

pytestmark = pytest.mark.integration
NS = "native-backoff"
FIRST, MOST = 3.0, 6.0


@pytest.fixture(scope="module")
def bed(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[k8s.ApiClient]:
    with nativebed.plane(bins, tmp_path_factory.mktemp("native-backoff"), prefix="nb", nodes_count=1) as (lc, api):
        k8s.CoreV1Api(api).create_namespace({"metadata": {"name": NS}})
        thread = _reconciler(lc).start()
        try:
            yield api
        finally:
            thread.stop()


def _reconciler(lc: cluster.LocalCluster) -> loopthread.LoopThread:
    async def main(ready: asyncio.Event) -> None:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as conn:
            ready.set()
            await native_controller.NativeReconciler(conn, first=FIRST, most=MOST).run()

    return loopthread.LoopThread(main, "native-reconciler")


def _posts(api: k8s.ApiClient) -> int:
    """Workload creates the apiserver has been asked for, whatever it answered."""
    return sum(n for (verb, _), n in apiserver.calls(api, "workloads", "scheduling.k8s.io").items() if verb == "POST")


def _message(api: k8s.ApiClient, name: str) -> str | None:
    pg = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*apiserver.PG, NS, "podgroups", name)
    conditions = pg.get("status", {}).get("conditions") or []
    return next((c["message"] for c in conditions if c["type"] == keys.NATIVE_SYNCED), None)


def _refused_for(api: k8s.ApiClient, name: str, klass: str) -> str:
    return apiserver.eventually(
        lambda: (m := _message(api, name)) and klass in m and m, 30, f"the refusal naming {klass}"
    )


def test_a_refused_create_waits_its_backoff_restarts_on_a_spec_change_and_ends_with_the_group(
    bed: k8s.ApiClient,
) -> None:
    custom = k8s.CustomObjectsApi(bed)
    before = _posts(bed)
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "refused"},
        "spec": {"minMember": 2, "queue": "default", "priorityClassName": "no-such-class"},
    }
    custom.create_namespaced_custom_object(*apiserver.PG, NS, "podgroups", group)
    _refused_for(bed, "refused", "no-such-class")
    assert _posts(bed) - before == 1  # the group's own ADDED and the condition's MODIFIED: one create

    # Twenty events of the same spec: nothing sent (before the backoff, each was a refused POST).
    for i in range(20):
        custom.patch_namespaced_custom_object(
            *apiserver.PG, NS, "podgroups", "refused", {"metadata": {"annotations": {"touched": str(i)}}}
        )
    # A change of spec is tried at once; the events before it in the watch were all handled by then.
    custom.patch_namespaced_custom_object(
        *apiserver.PG, NS, "podgroups", "refused", {"spec": {"priorityClassName": "no-such-class-2"}}
    )
    second = _refused_for(bed, "refused", "no-such-class-2")
    changed = time.monotonic()
    assert _posts(bed) - before == 2

    # The timer tries once more, not before the (restarted) backoff has passed.
    apiserver.eventually(lambda: _posts(bed) - before == 3, 4 * FIRST, "the retry after the backoff")
    assert time.monotonic() - changed >= FIRST * 0.8
    assert _message(bed, "refused") == second  # the same message: no new condition, no new Event
    events = k8s.CoreV1Api(bed).list_namespaced_event(NS, field_selector="involvedObject.name=refused").items
    refusals = [e.message for e in events if e.reason == "NativeGroupRefused"]
    assert len(refusals) == 2 and second in refusals, refusals

    # Deleted: not tried again once its next backoff (MOST) would have passed.
    custom.delete_namespaced_custom_object(*apiserver.PG, NS, "podgroups", "refused")
    deadline = time.monotonic() + MOST + 2
    while time.monotonic() < deadline:  # a window of counts: what must not happen has no event to wait on
        assert _posts(bed) - before == 3
        time.sleep(0.5)
    assert nativebed.native_podgroup(bed, NS, "refused") is None
