"""Builders for JobSets (``jobset.x-k8s.io/v1alpha2``), as users and the Trainer write them."""

from __future__ import annotations

from typing import Any

from bridge import keys


def pod(cpu: str = "1", memory: str = "1Gi", *, gpu: int = 0, priority_class: str | None = None) -> dict[str, Any]:
    """A pod template's spec with one container asking for ``cpu``, ``memory`` (and GPUs)."""
    requests = {"cpu": cpu, "memory": memory, **({"nvidia.com/gpu": str(gpu)} if gpu else {})}
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "example/train:1", "resources": {"requests": requests}}],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    return spec


def rjob(
    name: str,
    replicas: int = 1,
    *,
    parallelism: int | None = None,
    completions: int | None = None,
    depends: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A replicatedJob; ``depends`` maps a replicatedJob's name to Ready or Complete."""
    job: dict[str, Any] = {"template": {"spec": spec or pod()}}
    if parallelism is not None:
        job["parallelism"] = parallelism
    if completions is not None:
        job["completions"] = completions
    out: dict[str, Any] = {"name": name, "replicas": replicas, "template": {"spec": job}}
    if annotations:
        out["template"]["metadata"] = {"annotations": annotations}
    if depends:
        out["dependsOn"] = [{"name": n, "status": s} for n, s in depends.items()]
    return out


def jobset(
    name: str,
    *rjobs: dict[str, Any],
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    in_order: bool = False,
    **spec: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "team-a"}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    body: dict[str, Any] = {"replicatedJobs": list(rjobs), **spec}
    if in_order:
        body["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta, "spec": body}


def deepspeed(name: str = "ds", nodes: int = 2) -> dict[str, Any]:
    """The JobSet the Trainer renders for deepspeed-distributed: nodes, then the launcher once they are Ready."""
    return jobset(
        name,
        rjob("node", parallelism=nodes, completions=nodes, spec=pod("2", "4Gi", gpu=1)),
        rjob("launcher", depends={"node": "Ready"}, spec=pod("1", "2Gi")),
        successPolicy={"operator": "All", "targetReplicatedJobs": ["launcher"]},
    )


def torchtune(name: str = "tune", nodes: int = 2) -> dict[str, Any]:
    """The JobSet the Trainer renders for torchtune: two initializers, then the trainer once both are Complete."""
    return jobset(
        name,
        rjob("dataset-initializer", spec=pod("2", "4Gi")),
        rjob("model-initializer", spec=pod("2", "8Gi")),
        rjob(
            "node",
            parallelism=nodes,
            completions=nodes,
            depends={"dataset-initializer": "Complete", "model-initializer": "Complete"},
            spec=pod("4", "16Gi", gpu=1),
        ),
    )


def everything(name: str = "tpu") -> dict[str, Any]:
    """Much of what a JobSet may say: InOrder, exclusive topology, both queue labels, suspend, a failure policy."""
    return jobset(
        name,
        rjob("coordinator", spec=pod("1", "1Gi", priority_class="high")),
        rjob("slices", replicas=2, parallelism=4, completions=4, annotations={"a": "b"}),
        in_order=True,
        labels={"scheduling.volcano.sh/queue-name": "default", "kueue.x-k8s.io/queue-name": "lq"},
        annotations={"alpha.jobset.sigs.k8s.io/exclusive-topology": "zone"},
        suspend=True,
        failurePolicy={"maxRestarts": 2, "rules": [{"name": "r", "action": "RestartJobSet"}]},
    )


def operator_pod(jobset_name: str, rjob_name: str, *, native_group: str | None = None) -> dict[str, Any]:
    """A pod as the JobSet controller's Job makes it from a stamped template (``native_group``:
    the template was a later stage's, on the native backend)."""
    annotations = {keys.GROUP_NAME: jobset_name, keys.TASK_SPEC: rjob_name}
    if native_group is not None:
        annotations[keys.NATIVE_GROUP] = native_group
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{jobset_name}-{rjob_name}-0-0",
            "labels": {
                "jobset.sigs.k8s.io/jobset-name": jobset_name,
                "jobset.sigs.k8s.io/replicatedjob-name": rjob_name,
            },
            "annotations": annotations,
        },
        "spec": pod(),
    }
