"""Volcano Jobs on the test bed: our scheduler for them, their objects read back, and what a pod's
containers would see (environment, files) computed by the node simulator's own pure modules
from the objects our controller made.

A test module takes the fixtures by name: ``scheduler = vcjobs.scheduler`` and ``env = vcjobs.env``
(``env`` is the client, a fresh namespace and the scheduler, with our webhook and controllers
and the simulated nodes running).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import watch

from scheduler import configure
from tests.support import apiserver, bridgethread, schedthread, simthread
from vbridge.localcluster import cluster
from vbridge.nodesim import envvars, podstatus, volumes

VC = ("batch.volcano.sh", "v1alpha1")


NODES = [f"sim-node-{i}" for i in range(4)]  # the session's simulated nodes (tests/conftest.py)
Env = tuple[k8s.ApiClient, str, schedthread.SchedThread]


@pytest.fixture(scope="module")
def scheduler(
    control_plane: cluster.LocalCluster, sim_nodes: simthread.SimThread, api_client: k8s.ApiClient
) -> Iterator[schedthread.SchedThread]:
    """Our scheduler as ``volcano``, once the simulated nodes are schedulable."""
    for name in NODES:
        # The TaintNodesByCondition admission plugin taints new nodes not-ready; with the node
        # lifecycle controller off, nobody lifts it. Do what that controller would.
        k8s.CoreV1Api(api_client).patch_node(name, {"spec": {"taints": None}})
    conf = configure.parse("", scheduler_name="volcano")
    thread = schedthread.SchedThread(control_plane, conf, connections=16, name="vcjob-scheduler").start()
    try:
        yield thread
    finally:
        thread.stop()


@pytest.fixture
def env(
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    sim_nodes: simthread.SimThread,
    scheduler: schedthread.SchedThread,
    namespace: str,
) -> Env:
    return api_client, namespace, scheduler


def create_job(api: k8s.ApiClient, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).create_namespaced_custom_object(*VC, ns, "jobs", body)
    return out


def get_job(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*VC, ns, "jobs", name)
    return out


def phase(api: k8s.ApiClient, ns: str, name: str) -> str:
    return str(((get_job(api, ns, name).get("status") or {}).get("state") or {}).get("phase", ""))


def pods_of(api: k8s.ApiClient, ns: str, job: str) -> dict[str, dict[str, Any]]:
    """The job's pods as API dicts, by name."""
    items = k8s.CoreV1Api(api).list_namespaced_pod(ns, label_selector=f"volcano.sh/job-name={job}").items
    return {p.metadata.name: api.sanitize_for_serialization(p) for p in items}


def pod_calls(api: k8s.ApiClient) -> collections.Counter[tuple[str, str]]:
    """The apiserver's own count of pod calls so far (``apiserver.calls`` of ``pods``)."""
    return apiserver.calls(api, "pods")


def running(api: k8s.ApiClient, ns: str, job: str, expected: set[str]) -> dict[str, dict[str, Any]]:
    """Wait until the job's pods are exactly ``expected``, all Running."""
    return apiserver.eventually(
        lambda: (
            (p := pods_of(api, ns, job))
            and set(p) == expected
            and all(q.get("status", {}).get("phase") == "Running" for q in p.values())
            and p
        ),
        what=f"pods {sorted(expected)} of {job} to run",
    )


def finish(api: k8s.ApiClient, ns: str, name: str, code: int = 0) -> None:
    """Write the status a kubelet writes when the container exits."""
    core = k8s.CoreV1Api(api)
    pod = api.sanitize_for_serialization(core.read_namespaced_pod(name, ns))
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    core.patch_namespaced_pod_status(name, ns, podstatus.finished(pod, code=code, now=now))


@dataclasses.dataclass(frozen=True)
class PodEvent:
    kind: str  # ADDED, MODIFIED, DELETED
    name: str
    phase: str
    ready: bool  # Running with every container ready


def pod_events(
    api: k8s.ApiClient,
    ns: str,
    start: Callable[[], object],
    done: Callable[[Sequence[PodEvent]], bool],
    timeout: int = 60,
) -> list[PodEvent]:
    """Every pod change in ``ns`` from before ``start()`` until ``done`` holds, in etcd's order."""
    core = k8s.CoreV1Api(api)
    since = core.list_namespaced_pod(ns).metadata.resource_version
    start()
    seen: list[PodEvent] = []
    stream = watch.Watch()
    for event in stream.stream(core.list_namespaced_pod, ns, resource_version=since, timeout_seconds=timeout):
        pod = event["object"]
        statuses = pod.status.container_statuses or []
        phase = pod.status.phase or "Pending"
        ready = phase == "Running" and bool(statuses) and all(c.ready for c in statuses)
        seen.append(PodEvent(event["type"], pod.metadata.name, phase, ready))
        if done(seen):
            stream.stop()
            return seen
    raise AssertionError(f"timed out after {timeout} s; pod events seen: {seen}")


def bind_order(sched: schedthread.SchedThread, keys: set[str]) -> dict[str, int]:
    """For each of ``keys`` (``ns/pod``) the scheduler bound, the index of the cycle that bound it."""
    out: dict[str, int] = {}
    for i, report in enumerate(list(sched.reports)):
        for key in set(report.outcome.bound) & keys:
            out.setdefault(key, i)
    return out


def _sources(api: k8s.ApiClient, ns: str, pod: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    core = k8s.CoreV1Api(api)
    need = volumes.needs(pod)
    configmaps = {n: api.sanitize_for_serialization(core.read_namespaced_config_map(n, ns)) for n in need.configmaps}
    secrets = {n: api.sanitize_for_serialization(core.read_namespaced_secret(n, ns)) for n in need.secrets}
    return configmaps, secrets


def environment(api: k8s.ApiClient, ns: str, pod: dict[str, Any], container: str) -> dict[str, str]:
    """The variables ``container`` of ``pod`` starts with (as the kubelet resolves them)."""
    configmaps, secrets = _sources(api, ns, pod)
    spec = pod["spec"]
    found = next(c for c in [*spec.get("initContainers", []), *spec["containers"]] if c["name"] == container)
    return envvars.resolve(found, pod, configmaps=configmaps, secrets=secrets)


def files(api: k8s.ApiClient, ns: str, pod: dict[str, Any], container: str, path: str) -> dict[str, str]:
    """The files ``container`` finds under its mount at ``path``, by name."""
    configmaps, secrets = _sources(api, ns, pod)
    spec = pod["spec"]
    found = next(c for c in spec["containers"] if c["name"] == container)
    mount = next(m for m in volumes.mounts(found) if m.path == path)
    volume = next(v for v in spec["volumes"] if v["name"] == mount.volume)
    src = volumes.Sources(pod=pod, configmaps=configmaps, secrets=secrets, tokens={})
    prefix = f"{mount.sub_path}/" if mount.sub_path else ""
    return {
        f.path.removeprefix(prefix): f.data.decode()
        for f in volumes.render(volume, src) or []
        if f.path.startswith(prefix)
    }


BUS = ("bus.volcano.sh", "v1alpha1")


def vcctl_command(api: k8s.ApiClient, target: dict[str, Any], action: str, *, namespace: str) -> dict[str, Any]:
    """A Command as ``vcctl`` makes it: ``action`` on ``target`` (its ownerReference), in ``namespace``."""
    meta = target["metadata"]
    ref = {
        "apiVersion": target["apiVersion"],
        "kind": target["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    body = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"generateName": f"{meta['name']}-{action.lower()}-", "ownerReferences": [ref]},
        "target": ref,
        "action": action,
    }
    out: dict[str, Any] = k8s.CustomObjectsApi(api).create_namespaced_custom_object(*BUS, namespace, "commands", body)
    return out
