"""One object that cannot be decoded costs only itself: a follow skips it, in its list and in a
watch event, reports it once, and hands the others on; the Volcano Job controller goes on
reconciling every other job.

The object is a Volcano Job nested 1,100 levels deep in its pod template (the CRD keeps templates
as ``x-kubernetes-preserve-unknown-fields``; the apiserver stores it, orjson refuses past 1,024
levels) in ``kube-system``, which our webhook never sees. It is written with ``kubectl create
--raw`` (no client of ours serialises that deep).
"""

from __future__ import annotations

import asyncio
import logging
import pathlib
import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from kubernetes import client as k8s

from bridge import defaults
from bridge.k8s import client, kubeconfigs, paths, watching
from tests.builders import vcjob
from tests.support import apiserver, bridgethread, vcjobs, watchcounts
from vbridge import cli
from vbridge.localcluster import binaries, cluster

pytestmark = pytest.mark.integration

DEPTH = 1100
JOBS = paths.resource(defaults.BATCH_API, "jobs")
# Every job (none has this label), under a name of this test's own in watching.STATS and the log:
# the session's Volcano Job controller, if running, watches the same path and skips the same jobs.
EVERY = {"labelSelector": "!watch.vbridge.test/never"}
MINE = watching.where(JOBS, EVERY)


def deep_job(name: str, depth: int = DEPTH) -> bytes:
    """A Volcano Job whose task template holds ``depth`` nested objects, as JSON text."""
    body = vcjob.simple(name, 1)
    body["metadata"]["namespace"] = defaults.SYSTEM_NAMESPACE
    body["spec"]["tasks"][0]["template"]["metadata"]["annotations"] = {}
    text = orjson.dumps(body)
    marker = b'"annotations":{}'
    assert marker in text
    nested = b'"x":' + b'{"a":' * depth + b"1" + b"}" * depth
    return text.replace(marker, marker + b"," + nested)


class DeepJobs:
    """Deep jobs in kube-system, made with kubectl and removed afterwards."""

    def __init__(self, bins: binaries.Binaries, lc: cluster.LocalCluster, tmp: pathlib.Path) -> None:
        self.bins, self.lc, self.tmp = bins, lc, tmp
        self.names: list[str] = []

    def make(self) -> str:
        name = "deep-" + uuid.uuid4().hex[:6]
        file = self.tmp / f"{name}.json"
        file.write_bytes(deep_job(name))
        path = paths.resource(defaults.BATCH_API, "jobs", namespace=defaults.SYSTEM_NAMESPACE)
        apiserver.kubectl(self.bins, self.lc, "create", "--raw", path, "-f", str(file))
        self.names.append(name)
        return name

    def remove(self) -> None:
        for name in self.names:
            path = paths.resource(defaults.BATCH_API, "jobs", namespace=defaults.SYSTEM_NAMESPACE, name=name)
            apiserver.kubectl(self.bins, self.lc, "delete", "--raw", path)


@pytest.fixture
def deep(bins: binaries.Binaries, control_plane: cluster.LocalCluster, tmp_path: pathlib.Path) -> Iterator[DeepJobs]:
    made = DeepJobs(bins, control_plane, tmp_path)
    try:
        yield made
    finally:
        made.remove()


def test_a_follow_skips_a_deep_job_in_its_list_and_in_an_event_and_reports_it_once(
    control_plane: cluster.LocalCluster,
    api_client: k8s.ApiClient,
    namespace: str,
    deep: DeepJobs,
    caplog: pytest.LogCaptureFixture,
) -> None:
    listed_deep = deep.make()
    vcjobs.create_job(api_client, namespace, vcjob.simple("before", 1))
    before = watching.STATS.copy()
    seen: list[tuple[str, str]] = []
    arrived = asyncio.Event()

    def handle(kind: str, obj: dict[str, Any]) -> None:
        seen.append((kind, (obj.get("metadata") or {}).get("name", "")))
        arrived.set()

    async def until(event: tuple[str, str]) -> None:
        async with asyncio.timeout(30):
            while event not in seen:
                arrived.clear()
                await arrived.wait()

    async def main() -> str:
        synced = asyncio.Event()
        async with client.Client(kubeconfigs.load(control_plane.kubeconfig)) as api:
            task = asyncio.create_task(watching.follow(api, JOBS, handle, params=EVERY, on_synced=synced.set))
            try:
                async with asyncio.timeout(30):
                    await synced.wait()
                watched_deep = await asyncio.to_thread(deep.make)
                await asyncio.to_thread(vcjobs.create_job, api_client, namespace, vcjob.simple("after", 1))
                await until(("ADDED", "after"))
                patch = {"metadata": {"labels": {"touched": "yes"}}}
                await asyncio.to_thread(
                    k8s.CustomObjectsApi(api_client).patch_namespaced_custom_object,
                    *vcjobs.VC,
                    namespace,
                    "jobs",
                    "before",
                    patch,
                )
                await until(("MODIFIED", "before"))
                return watched_deep
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    with caplog.at_level(logging.WARNING, logger="bridge.k8s.watching"):
        watched_deep = asyncio.run(main())
    names = {name for _, name in seen}
    assert {"before", "after"} <= names
    assert not names & {listed_deep, watched_deep}
    counts = watchcounts.gained(before, MINE)
    assert counts["skipped"] == 2 and counts["list:first"] == 1
    assert counts["list:gone"] == counts["list:error"] == 0
    reports = [m for m in (r.getMessage() for r in caplog.records) if m.startswith("skipped") and MINE in m]
    assert len(reports) == 2, reports
    assert f"kube-system/{listed_deep}" in reports[0] and "depth" in reports[0]
    assert f"ADDED kube-system/{watched_deep}" in reports[1]


def test_the_job_controller_reconciles_other_jobs_while_a_deep_job_exists(
    bridge: bridgethread.BridgeThread, api_client: k8s.ApiClient, namespace: str, deep: DeepJobs
) -> None:
    deep.make()
    vcjobs.create_job(api_client, namespace, vcjob.simple("fine", 1))
    group = apiserver.eventually(
        lambda: [g for g in apiserver.podgroups(api_client, namespace) if g["metadata"]["name"].startswith("fine")],
        what="the PodGroup of the job beside the deep one",
    )
    assert group[0]["spec"]["minMember"] == 1
    deep.make()  # and one that arrives as a watch event
    vcjobs.create_job(api_client, namespace, vcjob.simple("later", 1))
    apiserver.eventually(
        lambda: [g for g in apiserver.podgroups(api_client, namespace) if g["metadata"]["name"].startswith("later")],
        what="the PodGroup of a job created after a second deep one",
    )


def test_the_job_lists_show_the_other_jobs_and_warn_of_the_deep_one(
    control_plane: cluster.LocalCluster,
    api_client: k8s.ApiClient,
    namespace: str,
    deep: DeepJobs,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    name = deep.make()
    vcjobs.create_job(api_client, namespace, vcjob.simple("shown", 1))
    kc = f"--kubeconfig={control_plane.kubeconfig}"
    for argv in (("job", "list", "-A", "-o", "name"), ("list", "-A")):
        with caplog.at_level(logging.WARNING, logger="bridge.k8s.watching"):
            assert cli.main([*argv, kc]) == 0, argv
        out = capsys.readouterr().out
        assert "shown" in out and name not in out, (argv, out)
        # The command's list (the session's Job controller, if running, reports it as a watch event).
        warned = [r.getMessage() for r in caplog.records if f"skipped object kube-system/{name}" in r.getMessage()]
        assert len(warned) == 1 and "cannot be decoded" in warned[0], warned
        caplog.clear()
