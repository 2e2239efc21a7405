"""Builders for Kubeflow jobs and their pods, as users and operators write them."""

from __future__ import annotations

from typing import Any


def container(
    name: str = "main", cpu: str | None = None, memory: str | None = None, *, limits: bool = False, gpu: int = 0
) -> dict[str, Any]:
    res: dict[str, str] = {}
    if cpu:
        res["cpu"] = cpu
    if memory:
        res["memory"] = memory
    if gpu:
        res["nvidia.com/gpu"] = str(gpu)
    c: dict[str, Any] = {"name": name, "image": "example/train:1"}
    if res:
        c["resources"] = {"limits" if limits else "requests": res}
    return c


def replica(replicas: int = 1, *containers: dict[str, Any], priority_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": list(containers) or [container()]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"replicas": replicas, "restartPolicy": "OnFailure", "template": {"spec": spec}}


def job(
    kind: str,
    name: str,
    field: str,
    roles: dict[str, dict[str, Any]],
    *,
    version: str = "v1",
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "team-a"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": f"kubeflow.org/{version}", "kind": kind, "metadata": meta, "spec": {field: roles, **spec}}


def tfjob(name: str = "mnist", **roles: dict[str, Any]) -> dict[str, Any]:
    return job("TFJob", name, "tfReplicaSpecs", roles)


def pytorchjob(name: str = "torch", **roles: dict[str, Any]) -> dict[str, Any]:
    return job("PyTorchJob", name, "pytorchReplicaSpecs", roles)


def mpijob(name: str = "mpi", version: str = "v2beta1", **roles: dict[str, Any]) -> dict[str, Any]:
    return job("MPIJob", name, "mpiReplicaSpecs", roles, version=version)


def xgboostjob(name: str = "xgb", **roles: dict[str, Any]) -> dict[str, Any]:
    return job("XGBoostJob", name, "xgbReplicaSpecs", roles)


def paddlejob(name: str = "paddle", **roles: dict[str, Any]) -> dict[str, Any]:
    return job("PaddleJob", name, "paddleReplicaSpecs", roles)


def jaxjob(name: str = "jax", **roles: dict[str, Any]) -> dict[str, Any]:
    return job("JAXJob", name, "jaxReplicaSpecs", roles)


def operator_pod(job_name: str, role: str, index: int = 0, *, operator: str = "tfjob-controller") -> dict[str, Any]:
    """A pod as the training-operator creates it from an unstamped template."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job_name}-{role}-{index}",
            "namespace": "team-a",
            "labels": {
                "training.kubeflow.org/job-name": job_name,
                "training.kubeflow.org/replica-type": role,
                "training.kubeflow.org/replica-index": str(index),
                "training.kubeflow.org/operator-name": operator,
            },
        },
        "spec": {"schedulerName": "default-scheduler", "containers": [container("tensorflow", "1", "1Gi")]},
    }
