"""What the apiserver holds, counted: jobs' terminal states, gangs, orphans and double binds.

The reliability suite's verdicts are counted here from the apiserver alone, never from what a
component believes: a pod is bound when it has a ``nodeName``; bound twice when it has more than
one ``Scheduled`` Event (the scheduler records one per bind that took); a gang is partial when
some but fewer than ``minMember`` of its pods are bound; a pod or PodGroup is an orphan when what
it belongs to (its PodGroup, its owner) no longer exists, except the finished pods of a finished
Volcano Job, whose PodGroup the controller gives back (their gang is then counted against the
job's ``minAvailable``).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable
from typing import Any

from kubernetes import client as k8s

from tests.support import apiserver

VC = ("batch.volcano.sh", "v1alpha1")
TERMINAL = frozenset({"Completed", "Failed", "Aborted", "Terminated"})


@dataclasses.dataclass
class Tally:
    jobs: dict[str, str] = dataclasses.field(default_factory=dict)  # "ns/name" -> phase ("" before any)
    groups: dict[str, tuple[int, int, str]] = dataclasses.field(default_factory=dict)  # (minMember, bound, phase)
    orphan_pods: list[str] = dataclasses.field(default_factory=list)
    orphan_groups: list[str] = dataclasses.field(default_factory=list)
    double_binds: list[str] = dataclasses.field(default_factory=list)
    pods: int = 0

    def partial(self) -> list[str]:
        return [f"{g} ({b}/{m} bound)" for g, (m, b, _) in sorted(self.groups.items()) if 0 < b < m]

    def unfinished(self) -> list[str]:
        return [f"{j}: {p or 'no phase'}" for j, p in sorted(self.jobs.items()) if p not in TERMINAL]


def jobs(api: k8s.ApiClient, ns: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = k8s.CustomObjectsApi(api).list_namespaced_custom_object(*VC, ns, "jobs")["items"]
    return items


def job_phase(job: dict[str, Any]) -> str:
    return str(((job.get("status") or {}).get("state") or {}).get("phase") or "")


def count(api: k8s.ApiClient, namespaces: Iterable[str]) -> Tally:
    out = Tally()
    core = k8s.CoreV1Api(api)
    for ns in namespaces:
        listed = {j["metadata"]["uid"]: j for j in jobs(api, ns)}
        for job in listed.values():
            out.jobs[f"{ns}/{job['metadata']['name']}"] = job_phase(job)
        groups = {pg["metadata"]["name"]: pg for pg in apiserver.podgroups(api, ns)}
        pods = api.sanitize_for_serialization(core.list_namespaced_pod(ns))["items"]
        out.pods += len(pods)
        bound: collections.Counter[str] = collections.Counter()
        finished_groups: dict[str, int] = {}  # a finished job's group, given back: its job's minAvailable
        for pod in pods:
            meta = pod["metadata"]
            key = f"{ns}/{meta['name']}"
            group = (meta.get("annotations") or {}).get(apiserver.GROUP_NAME)
            owners = [listed.get(o["uid"]) for o in meta.get("ownerReferences") or [] if o["kind"] == "Job"]
            done = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
            if any(o is None for o in owners) or (group and group not in groups and not (owners and done)):
                out.orphan_pods.append(key)
            elif group and group not in groups and owners and owners[0] is not None:
                finished_groups[group] = int(owners[0]["spec"].get("minAvailable") or 1)
            if group and pod["spec"].get("nodeName"):
                bound[group] += 1
        for group, minimum in finished_groups.items():
            out.groups[f"{ns}/{group}"] = (minimum, bound[group], "given back")
        for name, pg in groups.items():
            owners = [o["uid"] for o in pg["metadata"].get("ownerReferences") or [] if o["kind"] == "Job"]
            if any(o not in listed for o in owners):
                out.orphan_groups.append(f"{ns}/{name}")
            phase = str((pg.get("status") or {}).get("phase") or "")
            out.groups[f"{ns}/{name}"] = (int(pg["spec"].get("minMember") or 1), bound[name], phase)
        scheduled: collections.Counter[tuple[str, str]] = collections.Counter()
        for e in core.list_namespaced_event(ns).items:
            if e.reason == "Scheduled" and e.involved_object.kind == "Pod":  # an aggregated Event counts each
                scheduled[e.involved_object.name, e.involved_object.uid] += max(e.count or 1, 1)
        out.double_binds += [f"{ns}/{name} ({n} Scheduled events)" for (name, _), n in scheduled.items() if n > 1]
    return out
