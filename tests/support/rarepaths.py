"""The code paths of the chart's components that the helm run's examples do not take, driven
through the installed chart (``tests/integration/test_helm_install.py``), so that the audit log
shows each granted verb they need used (``tests/support/privileges.py``).

Each function makes the situation, waits on the recorded state for the component's answer and
returns it; what it drives (component: verb, the code path):

- ``corrected_podgroup``: controllers ``podgroups: patch`` (``podgroup_io.ensure``: a PodGroup of
  the job's name made before the job, with a wrong minMember, corrected);
- ``unusable_spark_conf``: controllers ``pods/status: patch`` (``spark.py``: a driver whose conf
  Spark would refuse gets ``vbridge.io/PodGroupReady=False``, ``PodGroupNotCreated``);
- ``unschedulable_gang``: scheduler ``pods/status: patch`` (``PodScheduled=False`` on the pods of
  a gang no node can hold);
- ``job_command``: controllers ``commands: delete``, ``jobs: get``, ``jobs: patch``,
  ``subjectaccessreviews: create`` (``commands.py``: a vcctl ``AbortJob`` carried out on that
  gang, once its author, recorded by admission, may update it);
- ``queue_commands``: controllers ``queues: get``, ``queues/status: patch`` (``commands.py``:
  ``CloseQueue`` then ``OpenQueue`` on a Queue);
- ``ttl_job``: controllers ``jobs: delete`` (``vcjobs.py``: ``ttlSecondsAfterFinished: 0``);
- ``preemption``: scheduler ``pods: delete`` (``binder.py``: the preempt action evicts a
  lower-priority pod for a starving higher-priority group, on a node of its own).
"""

from __future__ import annotations

import contextlib
from typing import Any

import yaml
from kubernetes import client as k8s

from tests.builders import spark
from tests.support import apiserver, helmbed, schedbed, simthread, vcjobs
from vbridge.nodesim import nodes

__all__ = [
    "corrected_podgroup",
    "job_command",
    "preemption",
    "queue_commands",
    "ttl_job",
    "unschedulable_gang",
    "unusable_spark_conf",
]

BUS = "commands"


def _custom(bed: helmbed.Bed) -> k8s.CustomObjectsApi:
    return k8s.CustomObjectsApi(bed.api)


def _job(name: str, *, replicas: int, cpu: str) -> dict[str, Any]:
    """A Volcano Job of one task, its pods asking ``cpu`` each and running a second."""
    template = {
        "metadata": {"annotations": {"sim.vbridge.io/run-seconds": "1"}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
        },
    }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"minAvailable": replicas, "tasks": [{"name": "work", "replicas": replicas, "template": template}]},
    }


def corrected_podgroup(bed: helmbed.Bed) -> dict[str, Any]:
    """A PodGroup ``corrected`` (minMember 1) made by hand, then the TFJob ``corrected`` of 4: the
    controllers patch the group to the job's minMember; the group as corrected."""
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "corrected"},
        "spec": {"minMember": 1, "queue": "default"},
    }
    _custom(bed).create_namespaced_custom_object(*apiserver.PG, helmbed.WORK, "podgroups", group)
    tf: dict[str, Any] = yaml.safe_load((helmbed.ROOT / "examples" / "tfjob-v1.yaml").read_text())
    tf["metadata"] = {"name": "corrected"}
    _custom(bed).create_namespaced_custom_object(*helmbed.KF, helmbed.WORK, "tfjobs", tf)

    def fixed() -> dict[str, Any] | None:
        found = helmbed.podgroup(bed, "corrected")
        return found if found and found["spec"]["minMember"] == 4 else None

    out: dict[str, Any] = apiserver.eventually(fixed, 30, "the hand-made PodGroup corrected to the TFJob's 4")
    _custom(bed).delete_namespaced_custom_object(*helmbed.KF, helmbed.WORK, "tfjobs", "corrected")
    return out


def unusable_spark_conf(bed: helmbed.Bed) -> dict[str, Any]:
    """A spark-submit driver whose conf says ``spark.executor.instances=abc``: no PodGroup, the
    driver stays gated with the condition; the condition."""
    core = k8s.CoreV1Api(bed.api)
    drv = spark.submit_pod("driver", app_id="spark-bad00000000000000000000000000000")
    drv["metadata"].update(name="pi-bad-driver", namespace=helmbed.WORK)
    drv["spec"]["volumes"][0]["configMap"]["name"] = "spark-drv-bad-conf-map"
    core.create_namespaced_config_map(
        helmbed.WORK,
        {
            "metadata": {"name": "spark-drv-bad-conf-map"},
            "data": {"spark.properties": "spark.executor.instances=abc\n"},
        },
    )
    core.create_namespaced_pod(helmbed.WORK, drv)

    def stuck() -> dict[str, Any] | None:
        pod = core.read_namespaced_pod("pi-bad-driver", helmbed.WORK)
        conds = [c for c in pod.status.conditions or [] if c.type == "vbridge.io/PodGroupReady"]
        return bed.api.sanitize_for_serialization(conds[0]) if conds and conds[0].status == "False" else None

    out: dict[str, Any] = apiserver.eventually(stuck, 30, "the driver's PodGroupReady=False")
    core.delete_namespaced_pod("pi-bad-driver", helmbed.WORK, grace_period_seconds=0)
    return out


def unschedulable_gang(bed: helmbed.Bed) -> list[dict[str, Any]]:
    """A Volcano Job of 2 pods of 9 cpu (the plain nodes have 8): its pods' PodScheduled=False."""
    body = _job("too-big", replicas=2, cpu="9")
    _custom(bed).create_namespaced_custom_object(*helmbed.VC, helmbed.WORK, "jobs", body)

    def waiting() -> list[dict[str, Any]] | None:
        pods = apiserver.pods(bed.api, helmbed.WORK, "volcano.sh/job-name=too-big")
        marked = [
            c
            for p in pods
            for c in (p.get("status") or {}).get("conditions") or []
            if c["type"] == "PodScheduled" and c["status"] == "False"
        ]
        return marked if len(pods) == 2 and len(marked) == 2 else None

    out: list[dict[str, Any]] = apiserver.eventually(waiting, 60, "PodScheduled=False on the too-big gang")
    return out


def _command(bed: helmbed.Bed, target: dict[str, Any], action: str) -> dict[str, Any]:
    """A vcctl Command on ``target``, returned once the controllers carried it out (deleted it)."""
    made = vcjobs.vcctl_command(bed.api, target, action, namespace=helmbed.WORK)
    name = made["metadata"]["name"]
    apiserver.eventually(
        lambda: apiserver.gone(lambda: _custom(bed).get_namespaced_custom_object(*vcjobs.BUS, helmbed.WORK, BUS, name)),
        30,
        f"the Command {action} carried out (deleted)",
    )
    return made


def job_command(bed: helmbed.Bed, name: str) -> str:
    """``AbortJob`` on the Volcano Job ``name``; its phase once aborted. The job is then deleted."""
    _command(bed, helmbed.vcjob(bed, name), "AbortJob")
    phase = apiserver.eventually(
        lambda: helmbed.phase(bed, name) if helmbed.phase(bed, name) in ("Aborting", "Aborted") else None,
        60,
        f"{name} aborted",
    )
    _custom(bed).delete_namespaced_custom_object(*helmbed.VC, helmbed.WORK, "jobs", name)
    return str(phase)


def queue_commands(bed: helmbed.Bed, name: str) -> list[str]:
    """``CloseQueue`` then ``OpenQueue`` on the Queue ``name``; the states seen after each."""
    seen = []
    for action, state in (("CloseQueue", "Closed"), ("OpenQueue", "Open")):
        queue = _custom(bed).get_cluster_custom_object(*helmbed.QUEUES, "queues", name)
        _command(bed, {**queue, "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue"}, action)

        def reached(want: str = state) -> str | None:
            got = (_custom(bed).get_cluster_custom_object(*helmbed.QUEUES, "queues", name).get("status") or {}).get(
                "state"
            )
            return got if got == want else None

        seen.append(apiserver.eventually(reached, 30, f"Queue {name} {state}"))
    return seen


def ttl_job(bed: helmbed.Bed, name: str = "ttl-zero") -> bool:
    """A Volcano Job with ``ttlSecondsAfterFinished: 0``: admitted, run, Completed, deleted by the controllers."""
    body = _job(name, replicas=1, cpu="100m")
    body["spec"]["ttlSecondsAfterFinished"] = 0
    _custom(bed).create_namespaced_custom_object(*helmbed.VC, helmbed.WORK, "jobs", body)
    return bool(apiserver.eventually(lambda: apiserver.gone(lambda: helmbed.vcjob(bed, name)), 90, f"{name} deleted"))


def _evicted(core: k8s.CoreV1Api, name: str) -> bool:
    """The pod is gone, or on its way (deleted, still terminating)."""
    try:
        return core.read_namespaced_pod(name, helmbed.WORK).metadata.deletion_timestamp is not None
    except k8s.ApiException as exc:
        if exc.status == 404:
            return True
        raise


def preemption(bed: helmbed.Bed) -> set[str]:
    """On a node of its own (4 cpu, tainted: only these pods go there), a low-priority group of
    minMember 1 with 2 pods of 2 cpu fills it; a high-priority group of 1 pod of 2 cpu then
    preempts one of them. The low pods evicted (deleted by the scheduler)."""
    node, taint = "sim-preempt", ("sim.vbridge.io/preempt", "yes", "NoSchedule")
    extra = simthread.SimThread(bed.lc.kubeconfig, [nodes.NodeSpec(node, cpu="4", memory="16Gi", taints=(taint,))])
    extra.start()
    scheduling = k8s.SchedulingV1Api(bed.api)
    try:
        for name, value in (("vb-test-high", 1000), ("vb-test-low", 1)):
            scheduling.create_priority_class(k8s.V1PriorityClass(metadata=k8s.V1ObjectMeta(name=name), value=value))
        spec = {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "tolerations": [{"key": taint[0], "operator": "Equal", "value": taint[1], "effect": taint[2]}],
        }
        schedbed.podgroup(bed.api, helmbed.WORK, "low", 1, priority_class="vb-test-low")
        low = schedbed.pods(
            bed.api, helmbed.WORK, "low", 2, scheduler="volcano", cpu="2", priority_class="vb-test-low", spec=spec
        )
        apiserver.eventually(lambda: len(schedbed.bound(bed.api, helmbed.WORK, "low")) == 2, 60, "the low pods bound")
        schedbed.podgroup(bed.api, helmbed.WORK, "high", 1, priority_class="vb-test-high")
        schedbed.pods(
            bed.api, helmbed.WORK, "high", 1, scheduler="volcano", cpu="2", priority_class="vb-test-high", spec=spec
        )
        apiserver.eventually(lambda: len(schedbed.bound(bed.api, helmbed.WORK, "high")) == 1, 90, "the high pod bound")
        core = k8s.CoreV1Api(bed.api)
        evicted = {n for n in low if _evicted(core, n)}
        for name in ["high-0", *low]:
            with contextlib.suppress(k8s.ApiException):
                core.delete_namespaced_pod(name, helmbed.WORK, grace_period_seconds=0)
        for group in ("high", "low"):
            _custom(bed).delete_namespaced_custom_object(*apiserver.PG, helmbed.WORK, "podgroups", group)
        return evicted
    finally:
        extra.stop()
        for name in ("vb-test-high", "vb-test-low"):
            with contextlib.suppress(k8s.ApiException):
                scheduling.delete_priority_class(name)
