"""The job plugins volcano-bridge carries out: ``svc``, ``env``, ``ssh`` here, and the framework
plugins ``tensorflow``, ``pytorch``, ``mpi`` in ``bridge.adapters.vcjob.frameworks``. Pure.

Each plugin has two halves: the objects it adds beside the pods (:func:`objects`) and what it
changes in every pod (:func:`apply`: the framework plugins first, then ``env``, ``svc``,
``ssh``; Volcano runs them in map order, which is random). Key material for ``ssh`` is passed
in, never made here.

``svc`` as Volcano's: the headless Service ``<job>``, the ConfigMap ``<job>-svc`` (per task
``<task>.host``, one host a line, and ``VC_<TASK>_HOSTS``/``VC_<TASK>_NUM``; a task's '-' is '_'
in both keys), the NetworkPolicy ``<job>`` (ingress only from the job's own pods) unless
``--disable-network-policy``, and in each pod ``hostname``/``subdomain`` (unless the template
sets them), the ConfigMap at ``/etc/volcano`` and, unless ``--inject-hosts-env=false``, the
``VC_*`` variables. Its ``--publish-not-ready-addresses`` is on by default here (Volcano: off).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from bridge.adapters.vcjob import flags, frameworks, names, podedit, spec

__all__ = ["SSH_MODE", "SSH_PATH", "SSH_PORT", "SVC_PATH", "KeyPair", "apply", "hosts", "objects", "ssh_config"]

SVC_PATH = "/etc/volcano"
SSH_PATH = "/root/.ssh"
SSH_MODE = 0o600  # sshd refuses keys other users can read
SSH_PORT = 22
_SSH_KEYS = ("id_rsa", "id_rsa.pub", "authorized_keys", "config")


@dataclasses.dataclass(frozen=True)
class KeyPair:
    private_pem: str
    public_openssh: str


def _enabled(job: Mapping[str, Any]) -> Mapping[str, Any]:
    return (job.get("spec") or {}).get("plugins") or {}


def hosts(job: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per task, the stable DNS names of its pods (Volcano's GenerateHosts: a template that names
    its own hostname gives its task that one host)."""
    job_name = job["metadata"]["name"]
    out = {}
    for t in spec.tasks(job):
        count = 1 if (t.template.get("spec") or {}).get("hostname") else t.replicas
        out[t.name] = [names.domain(job_name, t.name, i, t.template) for i in range(min(count, t.replicas))]
    return out


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
    return {"name": name, "namespace": meta["namespace"], "labels": _selector(job)}


def _selector(job: Mapping[str, Any]) -> dict[str, str]:
    meta = job["metadata"]
    return {names.JOB_NAME: meta["name"], names.JOB_NAMESPACE: meta["namespace"]}


def _svc_objects(job: Mapping[str, Any]) -> list[dict[str, Any]]:
    job_name = job["metadata"]["name"]
    opts = flags.parse("svc", _enabled(job)["svc"])
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(job, names.service(job_name)),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": opts["publish-not-ready-addresses"],
            "selector": _selector(job),
        },
    }
    data: dict[str, str] = {}
    for task, task_hosts in hosts(job).items():
        key = task.replace("-", "_")
        data[f"{key}.host"] = "\n".join(task_hosts)
        data[f"{names.env_key(task)}_HOSTS"] = ",".join(task_hosts)
        data[f"{names.env_key(task)}_NUM"] = str(len(task_hosts))
    out = [
        service,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(job, names.configmap(job_name)), "data": data},
    ]
    if not opts["disable-network-policy"]:
        out.append(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": _meta(job, names.network_policy(job_name)),
                "spec": {
                    "podSelector": {"matchLabels": _selector(job)},
                    "ingress": [{"from": [{"podSelector": {"matchLabels": _selector(job)}}]}],
                    "policyTypes": ["Ingress"],
                },
            }
        )
    return out


def objects(job: Mapping[str, Any], keys: KeyPair | None) -> list[dict[str, Any]]:
    """Service, ConfigMap and NetworkPolicy (svc), Secret (ssh); no ownerReferences (the
    controller adds them)."""
    job_name = job["metadata"]["name"]
    enabled = _enabled(job)
    out = _svc_objects(job) if "svc" in enabled else []
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


def _svc(job: Mapping[str, Any], pod: dict[str, Any]) -> None:
    job_name, pod_spec = job["metadata"]["name"], pod["spec"]
    pod_spec["hostname"] = pod_spec.get("hostname") or pod["metadata"]["name"]
    pod_spec["subdomain"] = pod_spec.get("subdomain") or names.service(job_name)
    cm = names.configmap(job_name)
    podedit.mount(pod_spec, {"name": cm, "configMap": {"name": cm}}, {"name": cm, "mountPath": SVC_PATH})
    if not flags.parse("svc", _enabled(job)["svc"])["inject-hosts-env"]:
        return
    entries = []
    for t in spec.tasks(job):
        for suffix in ("_HOSTS", "_NUM"):
            key = names.env_key(t.name) + suffix
            entries.append({"name": key, "valueFrom": {"configMapKeyRef": {"name": cm, "key": key}}})
    for c in podedit.containers(pod_spec):
        podedit.add_env(c, entries)


def apply(job: Mapping[str, Any], pod: dict[str, Any], *, task: str, index: int) -> None:
    """Change ``pod`` (a full body) in place as the job's plugins ask."""
    job_name = job["metadata"]["name"]
    pod_spec = pod["spec"]
    enabled = _enabled(job)
    frameworks.apply(job, pod, task=task, index=index)
    if "env" in enabled:
        for c in podedit.containers(pod_spec):
            podedit.add_env(
                c, [{"name": "VK_TASK_INDEX", "value": str(index)}, {"name": "VC_TASK_INDEX", "value": str(index)}]
            )
    if "svc" in enabled:
        _svc(job, pod)
    if "ssh" in enabled:
        secret = names.secret(job_name)
        podedit.mount(
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
