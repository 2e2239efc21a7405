"""Job dicts for the vcjob tests: the seed manifests as the apiserver would hand them to us."""

from __future__ import annotations

import pathlib
from typing import Any

import yaml

from bridge.adapters.vcjob import spec

ROOT = pathlib.Path(__file__).resolve().parents[2]


def seed(name: str, **status: Any) -> dict[str, Any]:
    body = next(d for d in yaml.safe_load_all((ROOT / "examples" / name).read_text()) if d)
    body["metadata"].update(namespace="team-a", uid="u-1")
    job = spec.defaulted(body)
    if status:
        job["status"] = status
    return job


def mpi(**status: Any) -> dict[str, Any]:
    return seed("volcano-job-mpi.yaml", **status)


def tf(**status: Any) -> dict[str, Any]:
    return seed("volcano-job-tensorflow.yaml", **status)


def pod(job: dict[str, Any], task: str, index: int, phase: str = "Running", **extra: Any) -> dict[str, Any]:
    """An observed pod of ``job``; ``version`` and ``deleting`` tweak its annotations and metadata,
    ``exit_code``, ``restarts`` and ``ready`` its container's status, ``node`` binds it."""
    name = job["metadata"]["name"]
    meta: dict[str, Any] = {
        "name": f"{name}-{task}-{index}",
        "uid": f"{task}-{index}",
        "labels": {"volcano.sh/job-name": name, "volcano.sh/task-spec": task},
        "annotations": {"volcano.sh/task-spec": task, "volcano.sh/job-version": str(extra.get("version", 0))},
    }
    if extra.get("deleting"):
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: dict[str, Any] = {"phase": phase}
    if "exit_code" in extra:
        status["containerStatuses"] = [{"name": "c", "state": {"terminated": {"exitCode": extra["exit_code"]}}}]
    if "restarts" in extra:
        status["containerStatuses"] = [{"name": "c", "restartCount": extra["restarts"], "state": {"running": {}}}]
    if "ready" in extra:
        status["containerStatuses"] = [{"name": "c", "ready": extra["ready"], "state": {"running": {}}}]
    out: dict[str, Any] = {"metadata": meta, "status": status}
    if extra.get("node"):
        out["spec"] = {"nodeName": extra["node"]}
    return out


def workers(job: dict[str, Any], n: int, phase: str = "Running", **kw: Any) -> list[dict[str, Any]]:
    """The first ``n`` pods of the job's ``mpiworker`` task, in ``phase``."""
    return [pod(job, "mpiworker", i, phase, **kw) for i in range(n)]


def depends_mpi(**status: Any) -> dict[str, Any]:
    """Volcano's task-start-dependency MPI example: 1 mpimaster dependsOn 10 mpiworker, minAvailable 3."""
    return seed("volcano/depends-on-mpi.yaml", **status)


def simple(
    name: str,
    replicas: int = 3,
    *,
    run_seconds: float = 2.0,
    queue: str = "default",
    cpu: str = "1",
    policies: list[dict[str, Any]] | None = None,
    max_retry: int | None = None,
) -> dict[str, Any]:
    """A one-task Volcano Job of ``replicas`` pods, all needed (minAvailable), that the node
    simulator finishes ``run_seconds`` after they start; as a user would submit it."""
    annotations = {"sim.vbridge.io/run-seconds": str(run_seconds)}
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
    spec: dict[str, Any] = {
        "minAvailable": replicas,
        "queue": queue,
        "tasks": [
            {
                "name": "work",
                "replicas": replicas,
                "template": {
                    "metadata": {"annotations": annotations},
                    "spec": {"restartPolicy": "Never", "containers": [container]},
                },
            }
        ],
    }
    if policies is not None:
        spec["policies"] = policies
    if max_retry is not None:
        spec["maxRetry"] = max_retry
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name}, "spec": spec}
