"""What the apiserver holds, counted: jobs' terminal states, gangs, orphans and double binds.

The reliability suite's verdicts are counted here from the apiserver alone, never from what a
component believes: a pod is bound when it has a ``nodeName``; bound twice when it has more than
one ``Scheduled`` Event (the scheduler records one per bind that took); a gang is partial when
some but fewer than ``minMember`` of its pods are bound; a pod or PodGroup is an orphan when what
it belongs to (its PodGroup, its owner) no longer exists, except the finished pods of a finished
Volcano Job, whose PodGroup the controller gives back (their gang is then counted against the
job's ``minAvailable``).

Every list is read in pages of ``PAGE`` (``limit``/``continue``, as client-go's reflector pages
an etcd list) and decoded raw: a churn run leaves thousands of pods and Events in one namespace,
and one unpaged list of them outlived the apiserver's 60 s request timeout (504) on a loaded
machine. Events are listed by ``reason=Scheduled`` alone; ``count(..., events=False)`` skips
them (a settle wait's probe: double binds are counted once, at the end). ``Tally.members`` holds
each PodGroup's and each Volcano Job's pods with their state, for the message of a wait that
timed out (:func:`short`).
"""

from __future__ import annotations

import collections
import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kubernetes import client as k8s

from tests.support import apiserver

VC = ("batch.volcano.sh", "v1alpha1")
TERMINAL = frozenset({"Completed", "Failed", "Aborted", "Terminated"})
PAGE = 500


@dataclasses.dataclass
class Tally:
    jobs: dict[str, str] = dataclasses.field(default_factory=dict)  # "ns/name" -> phase ("" before any)
    groups: dict[str, tuple[int, int, str]] = dataclasses.field(default_factory=dict)  # (minMember, bound, phase)
    orphan_pods: list[str] = dataclasses.field(default_factory=list)
    orphan_groups: list[str] = dataclasses.field(default_factory=list)
    double_binds: list[str] = dataclasses.field(default_factory=list)
    pods: int = 0
    # "ns/group" (and "ns/job" for a Volcano Job's pods) -> "pod: phase on node" or "pod: unbound (why)"
    members: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    def partial(self) -> list[str]:
        return [f"{g} ({b}/{m} bound)" for g, (m, b, _) in sorted(self.groups.items()) if 0 < b < m]

    def unfinished(self) -> list[str]:
        return [f"{j}: {p or 'no phase'}" for j, p in sorted(self.jobs.items()) if p not in TERMINAL]


def pages(call: Callable[..., Any], *args: Any, **params: Any) -> Iterator[dict[str, Any]]:
    """The items of a list call (``list_namespaced_pod``, ``list_namespaced_custom_object``, ...),
    page by page, undecoded into models."""
    cont: str | None = None
    while True:
        extra = {"_continue": cont} if cont else {}
        raw = call(*args, limit=PAGE, _preload_content=False, **extra, **params)
        page = json.loads(raw.data)
        yield from page.get("items") or []
        cont = (page.get("metadata") or {}).get("continue")
        if not cont:
            return


def jobs(api: k8s.ApiClient, ns: str) -> list[dict[str, Any]]:
    return list(pages(k8s.CustomObjectsApi(api).list_namespaced_custom_object, *VC, ns, "jobs"))


def pod_state(pod: dict[str, Any]) -> str:
    """``name: Phase on node``, or ``name: unbound (PodScheduled reason: message)``."""
    status, node = pod.get("status") or {}, (pod.get("spec") or {}).get("nodeName")
    name, phase = pod["metadata"]["name"], status.get("phase") or "no phase"
    if node:
        return f"{name}: {phase} on {node}"
    why = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
    told = f" ({why.get('reason')}: {why.get('message')})" if why else ""
    gated = " gated" if (pod.get("spec") or {}).get("schedulingGates") else ""
    deleting = " deleting" if pod["metadata"].get("deletionTimestamp") else ""
    return f"{name}: unbound{gated}{deleting}{told}"


def short(tally: Tally, jobs: Iterable[str] = (), groups: Iterable[str] = (), most: int = 20) -> str:
    """What a wait for ``jobs`` (terminal) and ``groups`` (every member bound) ended short of: each
    job not terminal and each group not fully bound ("ns/name"), with its phase and its pods."""
    lines = []
    for job in jobs:
        phase = tally.jobs.get(job)
        if phase not in TERMINAL:
            pods = "; ".join(tally.members.get(job, [])) or "no pods"
            state = "missing" if phase is None else phase or "no phase"
            lines.append(f"Volcano Job {job}: {state} ({pods})")
    for group in groups:
        got = tally.groups.get(group)
        if got is None or got[1] < got[0]:
            state = f"{got[1]}/{got[0]} bound, phase {got[2] or 'none'}" if got else "PodGroup missing"
            lines.append(f"PodGroup {group}: {state} ({'; '.join(tally.members.get(group, [])) or 'no pods'})")
    more = f"; and {len(lines) - most} more" if len(lines) > most else ""
    return f"{len(lines)} short: " + " | ".join(lines[:most]) + more if lines else "nothing short"


def job_phase(job: dict[str, Any]) -> str:
    return str(((job.get("status") or {}).get("state") or {}).get("phase") or "")


def count(api: k8s.ApiClient, namespaces: Iterable[str], *, events: bool = True) -> Tally:
    out = Tally()
    core = k8s.CoreV1Api(api)
    for ns in namespaces:
        listed = {j["metadata"]["uid"]: j for j in jobs(api, ns)}
        for job in listed.values():
            out.jobs[f"{ns}/{job['metadata']['name']}"] = job_phase(job)
        custom = k8s.CustomObjectsApi(api).list_namespaced_custom_object
        groups = {pg["metadata"]["name"]: pg for pg in pages(custom, *apiserver.PG, ns, "podgroups")}
        pods = list(pages(core.list_namespaced_pod, ns))
        out.pods += len(pods)
        bound: collections.Counter[str] = collections.Counter()
        finished_groups: dict[str, int] = {}  # a finished job's group, given back: its job's minAvailable
        for pod in pods:
            meta = pod["metadata"]
            key = f"{ns}/{meta['name']}"
            group = (meta.get("annotations") or {}).get(apiserver.GROUP_NAME)
            owners = [listed.get(o["uid"]) for o in meta.get("ownerReferences") or [] if o["kind"] == "Job"]
            done = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
            whose = {str(o["metadata"]["name"]) for o in owners if o is not None} | ({group} if group else set())
            for name in whose:
                out.members.setdefault(f"{ns}/{name}", []).append(pod_state(pod))
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
        if not events:
            continue
        scheduled: collections.Counter[tuple[str, str]] = collections.Counter()
        for e in pages(core.list_namespaced_event, ns, field_selector="reason=Scheduled"):
            subject = e.get("involvedObject") or {}
            if subject.get("kind") == "Pod":  # an aggregated Event counts each
                scheduled[subject.get("name"), subject.get("uid")] += max(e.get("count") or 1, 1)
        out.double_binds += [f"{ns}/{name} ({n} Scheduled events)" for (name, _), n in scheduled.items() if n > 1]
    return out
