"""What the Volcano Job controller's watches hold: Jobs, their pods, their PodGroups.

Every sync reads from here instead of the apiserver (no GET of the Job, no LIST of its pods per
event). Two gaps between a write and the watch are closed as client-go's informers and
expectations close them:

- the Job as we last wrote it (the PATCH's answer) stands until the watch brings a newer one,
  so a sync never acts on a status older than its own last write;
- pods we created count as present until the watch shows them (or ``VCJOB_EXPECT_SECONDS``
  pass), and pods we deleted count as terminating until the watch shows them going, so no pod
  is made twice nor killed twice.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bridge import defaults
from bridge.adapters.vcjob import names

__all__ = ["Cache", "Change", "Obj", "job_key", "newer"]

Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Change:
    """One watch event, attributed to a job: the object and the phase it had before (None: new)."""

    job: str  # "<namespace>/<job name>"
    obj: Obj
    before: str | None
    deleted: bool


def job_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _meta(obj: Obj) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _key(obj: Obj) -> str:
    meta = _meta(obj)
    return job_key(meta.get("namespace") or "", meta.get("name") or "")


def _phase(obj: Obj | None) -> str | None:
    return None if obj is None else str((obj.get("status") or {}).get("phase") or "Pending")


def newer(candidate: Obj, current: Obj | None) -> bool:
    """Whether ``candidate`` may replace ``current``: etcd's resourceVersions grow, so a lower one
    is an echo from before our own write. Versions that are not numbers always replace."""
    if current is None:
        return True
    a, b = _meta(candidate).get("resourceVersion"), _meta(current).get("resourceVersion")
    try:
        return int(str(a)) >= int(str(b))
    except ValueError:
        return True


class Cache:
    def __init__(self) -> None:
        self.jobs: dict[str, Obj] = {}
        self._pods: dict[str, dict[str, Obj]] = {}  # job key -> pod name -> pod
        self._pod_job: dict[str, str] = {}  # pod key -> job key (a relisted deletion has no labels)
        self._groups: dict[str, Obj] = {}  # job key -> its PodGroup
        self._group_job: dict[str, str] = {}
        self._created: dict[str, dict[str, float]] = {}  # job key -> pod name -> until when it counts
        self._deleted: dict[str, set[str]] = {}  # job key -> pod names we deleted, not yet seen going
        self._succeeded: dict[str, dict[str, int]] = {}  # job key -> task -> pods Succeeded (no scan per event)

    # -- the watches ------------------------------------------------------------------------------

    def on_job(self, kind: str, job: Obj) -> str:
        key = _key(job)
        if kind == "DELETED":
            self.forget(key)
        elif newer(job, self.jobs.get(key)):
            self.jobs[key] = job
        return key

    def on_pod(self, kind: str, pod: Obj) -> Change | None:
        meta = _meta(pod)
        pod_key, name = _key(pod), meta.get("name") or ""
        label = (meta.get("labels") or {}).get(names.JOB_NAME)
        key = job_key(meta.get("namespace") or "", label) if label else self._pod_job.get(pod_key)
        if key is None:
            return None
        pods = self._pods.setdefault(key, {})
        held = pods.get(name)
        before = _phase(held)
        self._created.get(key, {}).pop(name, None)
        done = self._succeeded.setdefault(key, {})
        if held is not None and before == "Succeeded":
            done[names.pod_task(held)] = done.get(names.pod_task(held), 0) - 1
        if kind != "DELETED" and _phase(pod) == "Succeeded":
            done[names.pod_task(pod)] = done.get(names.pod_task(pod), 0) + 1
        if kind == "DELETED":
            pods.pop(name, None)
            self._pod_job.pop(pod_key, None)
            self._deleted.get(key, set()).discard(name)
            if not label and before is None:
                return None  # a stub for a pod we never held
        else:
            pods[name] = pod
            self._pod_job[pod_key] = key
            if meta.get("deletionTimestamp"):
                self._deleted.get(key, set()).discard(name)
        return Change(job=key, obj=pod if label else held or pod, before=before, deleted=kind == "DELETED")

    def on_group(self, kind: str, group: Obj) -> Change | None:
        meta = _meta(group)
        label = (meta.get("labels") or {}).get(names.JOB_NAME)
        key = job_key(meta.get("namespace") or "", label) if label else self._group_job.get(_key(group))
        if key is None:
            return None
        old = self._groups.get(key)
        before = None if old is None else str((old.get("status") or {}).get("phase") or "")
        if kind == "DELETED":
            if old is not None and _meta(old).get("name") == meta.get("name"):
                self._groups.pop(key, None)  # not a newer job's group of the same job name
            self._group_job.pop(_key(group), None)
        else:
            self._groups[key] = group
            self._group_job[_key(group)] = key
        return Change(job=key, obj=group, before=before, deleted=kind == "DELETED")

    def forget(self, key: str) -> None:
        """A deleted job: what the watches still bring about it is dropped with it."""
        self.jobs.pop(key, None)
        self._created.pop(key, None)
        self._succeeded.pop(key, None)
        self._deleted.pop(key, None)

    # -- what a sync reads ----------------------------------------------------------------------

    def group(self, key: str, name: str) -> Obj | None:
        group = self._groups.get(key)
        return group if group is not None and _meta(group).get("name") == name else None

    def pods(self, key: str, uid: str) -> list[Obj]:
        """The job's pods (those of this uid), ours being deleted marked as terminating."""
        deleted = self._deleted.get(key, set())
        out = []
        for name, pod in self._pods.get(key, {}).items():
            if not any(r.get("uid") == uid for r in _meta(pod).get("ownerReferences") or []):
                continue
            if name in deleted and not _meta(pod).get("deletionTimestamp"):
                pod = {**pod, "metadata": {**_meta(pod), "deletionTimestamp": "deleting"}}
            out.append(pod)
        return out

    def in_flight(self, key: str, now: float) -> set[str]:
        """Pods created (or being created) that the watch has not shown yet."""
        created = self._created.get(key, {})
        for name in [n for n, until in created.items() if until < now]:
            del created[name]
        return set(created)

    def task_pods(self, key: str, task: str, uid: str) -> list[Obj]:
        return [p for p in self.pods(key, uid) if names.pod_task(p) == task]

    def succeeded(self, key: str, task: str) -> int:
        """The task's pods in phase Succeeded, kept up to date by the pod watch."""
        return self._succeeded.get(key, {}).get(task, 0)

    # -- our own writes ---------------------------------------------------------------------------

    def wrote_job(self, job: Obj) -> None:
        key = _key(job)
        if key in self.jobs and newer(job, self.jobs[key]):
            self.jobs[key] = job

    def creating(self, key: str, pod_names: list[str], now: float) -> None:
        until = now + defaults.VCJOB_EXPECT_SECONDS
        self._created.setdefault(key, {}).update(dict.fromkeys(pod_names, until))

    def not_created(self, key: str, name: str) -> None:
        self._created.get(key, {}).pop(name, None)

    def deleting(self, key: str, name: str) -> None:
        if name in self._pods.get(key, {}):
            self._deleted.setdefault(key, set()).add(name)
