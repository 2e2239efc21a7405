"""The seed SparkApplication, TFJob and MPIJob (``examples/``), run by the real operators through
an installed chart, in either mode (``test_helm_beside_volcano.py``, ``test_helm_operators.py``).

``run(env, created)`` submits the three seeds into ``besidevolcano.WORK``, then for each reads the
recorded watch (a job may be done, and its group collected, before it is looked at): its one
PodGroup, owned by the job, with the seed's minMember in queue ``default``; every pod bound, with
``schedulerName`` ``volcano`` and the group's annotation; the group seen Running; and, at the end,
every job seen through to success by its operator. Returns one record per seed for the tables
(kind, group, bound pod names, created and bind times).
"""

from __future__ import annotations

import time
from typing import Any

import yaml
from kubernetes import client as k8s

from tests.support import apiserver, besidevolcano, helmbed, spark_operator

__all__ = ["KF2", "SEEDS", "condition", "run", "seed"]

WORK = besidevolcano.WORK
KF2 = ("kubeflow.org", "v2beta1")
JOB_NAME = "training.kubeflow.org/job-name"
# kind, job name, PodGroup, its pods' labels, pods, minMember
SEEDS = (
    ("SparkApplication", "spark-pi", "spark-spark-pi-pg", {"spark-role": "driver"}, 1, 1),
    ("TFJob", "example-job", "example-job", {JOB_NAME: "example-job"}, 4, 4),
    ("MPIJob", "tensorflow-mnist", "tensorflow-mnist", {JOB_NAME: "tensorflow-mnist"}, 3, 3),
)


def seed(name: str) -> dict[str, Any]:
    body: dict[str, Any] = yaml.safe_load((helmbed.ROOT / "examples" / name).read_text())
    body["metadata"].pop("namespace", None)
    return body


def condition(bed: helmbed.Bed, group: tuple[str, str], plural: str, name: str) -> str:
    """The last True condition of a Kubeflow job (``Succeeded`` once done)."""
    obj = k8s.CustomObjectsApi(bed.api).get_namespaced_custom_object(*group, WORK, plural, name)
    conds = [c["type"] for c in (obj.get("status") or {}).get("conditions") or [] if c.get("status") == "True"]
    return conds[-1] if conds else ""


def run(env: besidevolcano.Beside) -> list[dict[str, Any]]:
    bed = env.bed
    core = k8s.CoreV1Api(bed.api)
    core.create_namespace({"metadata": {"name": WORK}})
    core.create_namespaced_service_account(WORK, {"metadata": {"name": "spark"}})  # the seed's driver account
    custom = k8s.CustomObjectsApi(bed.api)
    created = {}
    created["SparkApplication"] = time.monotonic()
    app = spark_operator.submit(bed.api, WORK, seed("sparkapplication-pi-volcano.yaml"))
    assert app["spec"]["driver"]["annotations"][apiserver.GROUP_NAME] == "spark-spark-pi-pg"
    created["TFJob"] = time.monotonic()
    tf = custom.create_namespaced_custom_object(*helmbed.KF, WORK, "tfjobs", seed("tfjob-v1.yaml"))
    assert all(s["template"]["spec"]["schedulerName"] == "volcano" for s in tf["spec"]["tfReplicaSpecs"].values())
    created["MPIJob"] = time.monotonic()
    mpi = custom.create_namespaced_custom_object(*KF2, WORK, "mpijobs", seed("mpijob-v2beta1.yaml"))
    assert all(s["template"]["spec"]["schedulerName"] == "volcano" for s in mpi["spec"]["mpiReplicaSpecs"].values())

    records = []
    for kind, job, group, labels, count, min_member in SEEDS:
        tail = env.tail()
        pg = apiserver.eventually(lambda g=group: env.recorder.group(g), 60, f"the {kind}'s PodGroup {group}\n{tail}")
        owner = pg["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == (kind, job, True)
        assert pg["spec"]["minMember"] == min_member and pg["spec"]["queue"] == "default"
        binds = apiserver.eventually(
            lambda ls=labels, c=count: env.recorder.all_bound(ls, c), 240, f"the {kind}'s {count} pods bound\n{tail}"
        )
        assert len(binds) == count, sorted(binds)
        for b in binds.values():
            assert b.pod["spec"]["schedulerName"] == "volcano"
            assert b.pod["metadata"]["annotations"][apiserver.GROUP_NAME] == group
        apiserver.eventually(lambda g=group: "Running" in env.recorder.phases(g), 60, f"{group} Running")
        times = sorted(b.at for b in binds.values())
        records.append({"kind": kind, "group": group, "names": sorted(binds), "created": created[kind], "times": times})

    # The operators see the jobs through (the simulated pods succeed after a few seconds).
    apiserver.eventually(
        lambda: spark_operator.app_state(bed.api, WORK, "spark-pi") == "COMPLETED", 180, "spark-pi COMPLETED"
    )
    apiserver.eventually(
        lambda: condition(bed, helmbed.KF, "tfjobs", "example-job") == "Succeeded", 180, "the TFJob Succeeded"
    )
    apiserver.eventually(
        lambda: condition(bed, KF2, "mpijobs", "tensorflow-mnist") == "Succeeded", 180, "the MPIJob Succeeded"
    )
    return records
