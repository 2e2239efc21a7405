"""The job plugins volcano-bridge carries out: ``svc``, ``env`` and ``ssh``. Pure.

Each plugin has two halves: the objects it adds beside the pods (:func:`objects`) and what it
changes in every pod (:func:`apply`). Key material for ``ssh`` is passed in, never made here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from bridge.adapters.vcjob import names, spec

__all__ = ["SSH_PATH", "SVC_PATH", "KeyPair", "apply", "hosts", "objects", "ssh_config"]

SVC_PATH = "/etc/volcano"
SSH_PATH = "/root/.ssh"
SSH_MODE = 0o600  # sshd refuses keys other users can read
SSH_PORT = 22
_SSH_KEYS = ("id_rsa", "id_rsa.pub", "authorized_keys", "config")


@dataclasses.dataclass(frozen=True)
class KeyPair:
    private_pem: str
    public_openssh: str


def _enabled(job: Mapping[str, Any]) -> set[str]:
    return set((job.get("spec") or {}).get("plugins") or {})


def hosts(job: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per task, the stable DNS names of its pods under the job's headless Service."""
    job_name = job["metadata"]["name"]
    return {
        t.name: [f"{names.pod(job_name, t.name, i)}.{names.service(job_name)}" for i in range(t.replicas)]
        for t in spec.tasks(job)
    }


def ssh_config(job: Mapping[str, Any]) -> str:
    job_name = job["metadata"]["name"]
    lines = ["StrictHostKeyChecking no", "UserKnownHostsFile /dev/null"]
    for t in spec.tasks(job):
        for i in range(t.replicas):
            pod = names.pod(job_name, t.name, i)
            lines += [f"Host {pod}", f"  HostName {pod}.{names.service(job_name)}", f"  Port {SSH_PORT}"]
    return "\n".join(lines) + "\n"


def _meta(job: Mapping[str, Any], name: str) -> dict[str, Any]:
    meta = job["metadata"]
    return {
        "name": name,
        "namespace": meta["namespace"],
        "labels": {names.JOB_NAME: meta["name"], names.JOB_NAMESPACE: meta["namespace"]},
    }


def objects(job: Mapping[str, Any], keys: KeyPair | None) -> list[dict[str, Any]]:
    """Service and ConfigMap (svc), Secret (ssh); no ownerReferences (the controller adds them)."""
    job_name, namespace = job["metadata"]["name"], job["metadata"]["namespace"]
    enabled = _enabled(job)
    out: list[dict[str, Any]] = []
    if "svc" in enabled:
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": _meta(job, names.service(job_name)),
                "spec": {
                    "clusterIP": "None",
                    # Peers must resolve each other before every pod is Ready (MPI starts sshd first).
                    "publishNotReadyAddresses": True,
                    "selector": {names.JOB_NAME: job_name, names.JOB_NAMESPACE: namespace},
                },
            }
        )
        data: dict[str, str] = {}
        for task, task_hosts in hosts(job).items():
            data[f"{task}.host"] = "\n".join(task_hosts)
            data[f"{names.env_key(task)}_HOSTS"] = ",".join(task_hosts)
            data[f"{names.env_key(task)}_NUM"] = str(len(task_hosts))
        out.append(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(job, names.configmap(job_name)), "data": data}
        )
    if "ssh" in enabled and keys is not None:
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": _meta(job, names.secret(job_name)),
                "type": "Opaque",
                "stringData": {
                    "id_rsa": keys.private_pem,
                    "id_rsa.pub": keys.public_openssh,
                    "authorized_keys": keys.public_openssh,
                    "config": ssh_config(job),
                },
            }
        )
    return out


def _containers(pod_spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*pod_spec.get("initContainers", []), *pod_spec.get("containers", [])]


def _add_env(container: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    env = container.setdefault("env", [])
    present = {e.get("name") for e in env}
    env.extend(e for e in entries if e["name"] not in present)  # the user's own value wins


def _mount(pod_spec: dict[str, Any], volume: dict[str, Any], mount: dict[str, Any]) -> None:
    pod_spec.setdefault("volumes", []).append(volume)
    for c in _containers(pod_spec):
        c.setdefault("volumeMounts", []).append(mount)


def apply(job: Mapping[str, Any], pod: dict[str, Any], *, task: str, index: int) -> None:
    """Change ``pod`` (a full body) in place as the job's plugins ask."""
    job_name = job["metadata"]["name"]
    pod_spec = pod["spec"]
    enabled = _enabled(job)
    if "env" in enabled:
        for c in _containers(pod_spec):
            _add_env(
                c, [{"name": "VK_TASK_INDEX", "value": str(index)}, {"name": "VC_TASK_INDEX", "value": str(index)}]
            )
    if "svc" in enabled:
        pod_spec["hostname"] = pod["metadata"]["name"]
        pod_spec["subdomain"] = names.service(job_name)
        cm = names.configmap(job_name)
        _mount(
            pod_spec,
            {"name": cm, "configMap": {"name": cm}},
            {"name": cm, "mountPath": SVC_PATH},
        )
        entries = []
        for t in spec.tasks(job):
            for suffix in ("_HOSTS", "_NUM"):
                key = names.env_key(t.name) + suffix
                entries.append({"name": key, "valueFrom": {"configMapKeyRef": {"name": cm, "key": key}}})
        for c in _containers(pod_spec):
            _add_env(c, entries)
    if "ssh" in enabled:
        secret = names.secret(job_name)
        _mount(
            pod_spec,
            {
                "name": secret,
                "secret": {
                    "secretName": secret,
                    "defaultMode": SSH_MODE,
                    "items": [{"key": k, "path": f".ssh/{k}"} for k in _SSH_KEYS],
                },
            },
            {"name": secret, "mountPath": SSH_PATH, "subPath": ".ssh"},
        )
