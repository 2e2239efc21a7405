"""Old Kubeflow APIs from our users' manifests, converted to today's. Pure.

- TFJob ``kubeflow.org/v1alpha1`` → ``v1``: ``replicaSpecs[]`` with ``tfReplicaType`` become
  ``tfReplicaSpecs.{Master,Worker,PS}``; ``tfPort`` becomes the container port ``tfjob-port`` on
  the ``tensorflow`` container; the template's restartPolicy moves to the replica; the job's
  ``schedulerName`` goes into every template. ``tfImage``, ``runtimeId`` and the old status
  have no equivalent and are dropped, with a note saying so.
- MPIJob ``kubeflow.org/v1alpha2`` → ``v1`` (training-operator), the behaviour-preserving target
  (v2beta1 needs SSH-capable images): ``backoffLimit``, ``activeDeadlineSeconds`` and
  ``cleanPodPolicy`` move under ``runPolicy``; ``slotsPerWorker``, ``mainContainer`` and
  ``mpiReplicaSpecs`` stay.

:func:`to_current` returns the converted object and the notes; objects already current are
returned unchanged with no notes.
"""

from __future__ import annotations

import copy
from typing import Any

from bridge import errors

__all__ = ["to_current"]

_TF_ROLES = {"MASTER": "Master", "WORKER": "Worker", "PS": "PS", "CHIEF": "Chief", "EVALUATOR": "Evaluator"}


def _tfjob_v1alpha1(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    spec = obj.get("spec") or {}
    notes: list[str] = []
    replicas = spec.get("replicaSpecs")
    if not isinstance(replicas, list) or not replicas:
        raise errors.InvalidObjectError("TFJob v1alpha1 needs spec.replicaSpecs (a list)")
    out: dict[str, Any] = {}
    for i, rs in enumerate(replicas):
        kind = str(rs.get("tfReplicaType", "MASTER")).upper()
        if kind not in _TF_ROLES:
            raise errors.InvalidObjectError(f"replicaSpecs[{i}].tfReplicaType {kind!r} is not MASTER, WORKER or PS")
        role = _TF_ROLES[kind]
        if role in out:
            raise errors.InvalidObjectError(f"replicaSpecs has two {kind} entries")
        template = copy.deepcopy(rs.get("template") or {})
        pod = template.setdefault("spec", {})
        restart = pod.pop("restartPolicy", None)
        if spec.get("schedulerName"):
            pod["schedulerName"] = spec["schedulerName"]
        port = rs.get("tfPort", 2222)
        for c in pod.get("containers") or []:
            if c.get("name") == "tensorflow" and not any(p.get("name") == "tfjob-port" for p in c.get("ports") or []):
                c.setdefault("ports", []).append({"name": "tfjob-port", "containerPort": port})
        entry: dict[str, Any] = {"replicas": rs.get("replicas", 1), "template": template}
        if restart:
            entry["restartPolicy"] = restart
        out[role] = entry
    for dropped in ("tfImage", "runtimeId", "terminationPolicy"):
        if dropped in spec:
            notes.append(f"spec.{dropped} has no equivalent in kubeflow.org/v1 and was dropped")
    body = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": _meta(obj), "spec": {"tfReplicaSpecs": out}}
    return body, notes


def _mpijob_v1alpha2(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    spec = copy.deepcopy(obj.get("spec") or {})
    if not isinstance(spec.get("mpiReplicaSpecs"), dict):
        raise errors.InvalidObjectError("MPIJob v1alpha2 needs spec.mpiReplicaSpecs")
    run_policy = dict(spec.pop("runPolicy", None) or {})
    for key in ("backoffLimit", "activeDeadlineSeconds", "cleanPodPolicy"):
        if key in spec:
            run_policy[key] = spec.pop(key)
    new_spec: dict[str, Any] = {k: spec[k] for k in ("slotsPerWorker", "mainContainer") if k in spec}
    if run_policy:
        new_spec["runPolicy"] = run_policy
    new_spec["mpiReplicaSpecs"] = spec["mpiReplicaSpecs"]
    body = {"apiVersion": "kubeflow.org/v1", "kind": "MPIJob", "metadata": _meta(obj), "spec": new_spec}
    return body, ["converted to the training-operator's kubeflow.org/v1 MPIJob (workers as pods, kubectl exec)"]


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    return {k: copy.deepcopy(v) for k, v in meta.items() if k in ("name", "namespace", "labels", "annotations")}


def to_current(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    key = (obj.get("apiVersion"), obj.get("kind"))
    if key == ("kubeflow.org/v1alpha1", "TFJob"):
        return _tfjob_v1alpha1(obj)
    if key == ("kubeflow.org/v1alpha2", "MPIJob"):
        return _mpijob_v1alpha2(obj)
    return obj, []
