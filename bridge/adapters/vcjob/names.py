"""Names and keys of everything a Volcano Job owns, as Volcano spells them. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import defaults, keys

__all__ = [
    "API_VERSION",
    "COMMAND",
    "GROUP_NAME",
    "JOB_NAME",
    "JOB_NAMESPACE",
    "JOB_RETRY_COUNT",
    "JOB_VERSION",
    "QUEUE_NAME",
    "TASK_INDEX",
    "TASK_SPEC",
    "configmap",
    "domain",
    "env_key",
    "network_policy",
    "pod",
    "pod_task",
    "pod_version",
    "podgroup",
    "secret",
    "service",
]

API_VERSION = defaults.BATCH_API
GROUP_NAME = keys.GROUP_NAME  # the key the scheduler reads to find a pod's gang
JOB_NAME = "volcano.sh/job-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
QUEUE_NAME = "volcano.sh/queue-name"
TASK_SPEC = keys.TASK_SPEC
TASK_INDEX = "volcano.sh/task-index"
JOB_VERSION = "volcano.sh/job-version"
JOB_RETRY_COUNT = "volcano.sh/job-retry-count"
# Ours: a one-shot command (AbortJob, ResumeJob) for the controller, removed once carried out.
# ``vbridge job`` sets it; a bus.volcano.sh Command (vcctl) is turned into it
# (vbridge.controllers.commands), so both take one path.
COMMAND = "vbridge.io/job-command"


def podgroup(job: Mapping[str, Any]) -> str:
    """``<job>-<uid>``: the uid keeps a re-created job from inheriting a stale group."""
    meta = job["metadata"]
    return f"{meta['name']}-{meta['uid']}"


def pod(job_name: str, task: str, index: int) -> str:
    return f"{job_name}-{task}-{index}"


def service(job_name: str) -> str:
    return job_name


def network_policy(job_name: str) -> str:
    return job_name


def domain(job_name: str, task: str, index: int, template: Mapping[str, Any]) -> str:
    """``<hostname>.<subdomain>`` of a pod (Volcano's MakeDomainName): the template's own
    ``hostname``/``subdomain`` if set, else the pod's name under the job's Service."""
    pod_spec = template.get("spec") or {}
    return f"{pod_spec.get('hostname') or pod(job_name, task, index)}.{pod_spec.get('subdomain') or service(job_name)}"


def configmap(job_name: str) -> str:
    return f"{job_name}-svc"


def secret(job_name: str) -> str:
    return f"{job_name}-ssh"


def env_key(task: str) -> str:
    """``VC_<TASK>``: task names are DNS labels, environment names may not hold '-'."""
    return "VC_" + task.upper().replace("-", "_")


def _annotation(obj: Mapping[str, Any], key: str) -> str:
    meta = obj.get("metadata") or {}
    return str((meta.get("annotations") or {}).get(key) or (meta.get("labels") or {}).get(key) or "")


def pod_task(pod_obj: Mapping[str, Any]) -> str:
    return _annotation(pod_obj, TASK_SPEC)


def pod_version(pod_obj: Mapping[str, Any]) -> int:
    raw = _annotation(pod_obj, JOB_VERSION)
    return int(raw) if raw.isdigit() else 0
