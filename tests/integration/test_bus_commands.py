"""vcctl's write verbs against the real apiserver: ``bus.volcano.sh`` Commands carried out, then gone.

Each Command is made exactly as vcctl makes it (``pkg/cli/util.CreateJobCommand`` for ``vcctl
job suspend|resume``, ``pkg/cli/queue.createQueueCommand`` for ``vcctl queue operate -a
open|close``): ``generateName`` ``<target>-<action lowercased>-``, the target as controller
ownerReference and as ``target``; queue Commands in ``default``. Our controllers (the bridge
thread) carry them out; our scheduler drains a Closing queue.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, buscommands, vcjobs

pytestmark = pytest.mark.integration
VC = vcjobs.VC


scheduler = vcjobs.scheduler  # the fixtures: our scheduler (Volcano's default conf, drf included)
env = vcjobs.env


def job(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*VC, ns, "jobs", name)
    return out


def phase(api: k8s.ApiClient, ns: str, name: str) -> str:
    return str(((job(api, ns, name).get("status") or {}).get("state") or {}).get("phase", ""))


def pods(api: k8s.ApiClient, ns: str, name: str) -> list[str]:
    items = k8s.CoreV1Api(api).list_namespaced_pod(ns, label_selector=f"volcano.sh/job-name={name}").items
    return sorted(p.metadata.name for p in items if p.status.phase == "Running" and not p.metadata.deletion_timestamp)


def test_vcctl_job_suspend_then_resume(env: vcjobs.Env) -> None:
    api, ns, _ = env
    made = buscommands.mpi_job(api, ns)
    name = made["metadata"]["name"]
    apiserver.eventually(lambda: len(pods(api, ns, name)) == 3, timeout=60, what="the gang to run")

    suspend = vcjobs.vcctl_command(api, made, "AbortJob", namespace=ns)
    assert suspend["metadata"]["name"].startswith(f"{name}-abortjob-")
    apiserver.eventually(lambda: buscommands.gone(api, suspend), what="the Command to be deleted once taken up")
    apiserver.eventually(lambda: phase(api, ns, name) == "Aborted", timeout=60, what="the job to be Aborted")
    apiserver.eventually(lambda: not pods(api, ns, name), timeout=60, what="the job's pods to stop")
    issued = [e for e in buscommands.events(api, ns, name) if e[1] == "CommandIssued"]
    message = "Start to execute command AbortJob, and clean it up to make sure executed not more than once."
    assert issued == [("Normal", "CommandIssued", message)]
    assert "vbridge.io/job-command" not in (job(api, ns, name)["metadata"].get("annotations") or {})

    resume = vcjobs.vcctl_command(api, job(api, ns, name), "ResumeJob", namespace=ns)
    apiserver.eventually(lambda: buscommands.gone(api, resume), what="the resume Command to be deleted")
    apiserver.eventually(lambda: len(pods(api, ns, name)) == 3, timeout=60, what="the gang to run again")
    apiserver.eventually(lambda: phase(api, ns, name) == "Running", timeout=60, what="the job to be Running again")


def test_vcctl_queue_close_stays_closing_until_drained_then_open(env: vcjobs.Env) -> None:
    api, ns, _ = env
    crd = k8s.CustomObjectsApi(api)
    qname = f"q-{ns[-5:]}"
    body = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": qname}}
    queue = crd.create_cluster_custom_object(*apiserver.PG, "queues", {**body, "spec": {"weight": 1}})
    try:
        group = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "held"},
            "spec": {"minMember": 1, "queue": qname},
        }
        crd.create_namespaced_custom_object(*apiserver.PG, ns, "podgroups", group)

        close = vcjobs.vcctl_command(api, queue, "CloseQueue", namespace="default")
        apiserver.eventually(lambda: buscommands.gone(api, close), what="the close Command to be deleted")
        apiserver.eventually(
            lambda: buscommands.queue_state(api, qname) == "Closing", what="Closing: a PodGroup is left"
        )
        assert ("Normal", "CloseQueue", f"queue {qname} is Closing") in buscommands.events(api, "default", qname)

        def denied() -> str | None:
            try:
                buscommands.mpi_job(api, ns, qname, dry_run="All")
            except k8s.ApiException as exc:
                return str(exc.body)
            return None

        # A Closing queue takes no new jobs: admission says so (once its queue facts show Closing).
        assert f"queue '{qname}' is Closing, not Open" in apiserver.eventually(denied, what="the denial")

        crd.delete_namespaced_custom_object(*apiserver.PG, ns, "podgroups", "held")
        apiserver.eventually(
            lambda: buscommands.queue_state(api, qname) == "Closed", what="the drained queue to be Closed"
        )

        current = crd.get_cluster_custom_object(*apiserver.PG, "queues", qname)
        reopen = vcjobs.vcctl_command(api, current, "OpenQueue", namespace="default")
        apiserver.eventually(lambda: buscommands.gone(api, reopen), what="the open Command to be deleted")
        apiserver.eventually(lambda: buscommands.queue_state(api, qname) == "Open", what="the queue to be Open again")
    finally:
        crd.delete_cluster_custom_object(*apiserver.PG, "queues", qname)


def test_a_command_that_cannot_be_carried_out_is_told_and_left(env: vcjobs.Env) -> None:
    api, ns, _ = env
    wrong = vcjobs.vcctl_command(api, buscommands.mpi_job(api, ns), "OpenQueue", namespace=ns)
    name = wrong["metadata"]["name"]
    refused = apiserver.eventually(
        lambda: [e for e in buscommands.events(api, ns, name) if e[1] == "InvalidCommand"], what="the refusal Event"
    )
    assert refused[0][0] == "Warning" and "action OpenQueue is not one a Job takes" in refused[0][2]
    assert not buscommands.gone(api, wrong)
