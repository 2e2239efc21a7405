"""bus.volcano.sh Commands on the test bed: Volcano's MPI example to aim them at, and what they
left behind (the Command gone, the Events, a queue's state). Commands are made with
``vcjobs.vcctl_command``, as vcctl makes them."""

from __future__ import annotations

import pathlib
from typing import Any

import yaml
from kubernetes import client as k8s

from tests.support import apiserver, vcjobs

BUS = vcjobs.BUS
MPI = pathlib.Path(__file__).resolve().parents[2] / "examples" / "volcano-job-mpi.yaml"


def mpi_job(api: k8s.ApiClient, ns: str, queue: str | None = None, dry_run: str | None = None) -> dict[str, Any]:
    """Volcano's MPI example, unchanged but for its queue."""
    body = yaml.safe_load(MPI.read_text())
    body["metadata"].pop("namespace", None)
    if queue:
        body["spec"]["queue"] = queue
    crd = k8s.CustomObjectsApi(api)
    extra = {"dry_run": dry_run} if dry_run else {}
    out: dict[str, Any] = crd.create_namespaced_custom_object(*vcjobs.VC, ns, "jobs", body, **extra)
    return out


def gone(api: k8s.ApiClient, command: dict[str, Any]) -> bool:
    meta = command["metadata"]
    crd = k8s.CustomObjectsApi(api)
    return apiserver.gone(lambda: crd.get_namespaced_custom_object(*BUS, meta["namespace"], "commands", meta["name"]))


def events(api: k8s.ApiClient, namespace: str, name: str) -> list[tuple[str, str, str]]:
    items = k8s.CoreV1Api(api).list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}").items
    return [(e.type, e.reason, e.message) for e in items]


def queue_state(api: k8s.ApiClient, name: str) -> str:
    queue = k8s.CustomObjectsApi(api).get_cluster_custom_object(*apiserver.PG, "queues", name)
    return str((queue.get("status") or {}).get("state") or "")
