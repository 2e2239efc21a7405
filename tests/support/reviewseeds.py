"""The fuzz tests' seeds: a valid object of each registered webhook path (``SEEDS``), and
objects using more of what the adapters read (``RICH``: sizes, queues, policies, plugins), so
``reviewgen``'s mutations reach it too. A new webhook path needs a seed here (``test_fuzz`` runs
every registered path)."""

from __future__ import annotations

from typing import Any

from tests.builders import jobset as js
from tests.builders import kubeflow as kf
from tests.builders import spark, vcjob
from tests.support import admission as support

__all__ = ["RICH", "SEEDS"]

# A valid object of each kind, by webhook path, with the (group, version, kind) it is reviewed as.
SEEDS: dict[str, tuple[tuple[str, str, str], dict[str, Any]]] = {
    "/mutate/sparkoperator-k8s-io-sparkapplication": (
        ("sparkoperator.k8s.io", "v1beta2", "SparkApplication"),
        spark.app(batchScheduler="volcano"),
    ),
    "/mutate/sparkoperator-k8s-io-sparkconnect": (
        ("sparkoperator.k8s.io", "v1alpha1", "SparkConnect"),
        spark.connect(),
    ),
    "/mutate/kubeflow-org-tfjob": (support.TF, kf.tfjob("t", PS=kf.replica(1), Worker=kf.replica(2))),
    "/mutate/kubeflow-org-pytorchjob": (
        ("kubeflow.org", "v1", "PyTorchJob"),
        kf.pytorchjob("p", Master=kf.replica(1), Worker=kf.replica(2)),
    ),
    "/mutate/kubeflow-org-mpijob-v1": (
        ("kubeflow.org", "v1", "MPIJob"),
        kf.mpijob("m", "v1", Launcher=kf.replica(1), Worker=kf.replica(2)),
    ),
    "/mutate/kubeflow-org-mpijob": (
        ("kubeflow.org", "v2beta1", "MPIJob"),
        kf.mpijob("m", Launcher=kf.replica(1), Worker=kf.replica(2)),
    ),
    "/mutate/kubeflow-org-xgboostjob": (("kubeflow.org", "v1", "XGBoostJob"), kf.xgboostjob("x", Master=kf.replica(1))),
    "/mutate/kubeflow-org-paddlejob": (("kubeflow.org", "v1", "PaddleJob"), kf.paddlejob("p", Worker=kf.replica(2))),
    "/mutate/kubeflow-org-jaxjob": (("kubeflow.org", "v1", "JAXJob"), kf.jaxjob("j", Worker=kf.replica(2))),
    "/mutate/batch-volcano-sh-job": (("batch.volcano.sh", "v1alpha1", "Job"), vcjob.simple("v")),
    "/mutate/jobset-x-k8s-io-jobset": (("jobset.x-k8s.io", "v1alpha2", "JobSet"), js.deepspeed("ds")),
    "/mutate/spark-apache-org-pod": (support.POD, spark.submit_pod("driver")),
    "/mutate/kubeflow-org-pod": (support.POD, kf.operator_pod("t", "worker")),
    "/mutate/jobset-x-k8s-io-pod": (support.POD, js.operator_pod("ds", "launcher", native_group="ds-stage-2")),
    "/mutate/scheduling-volcano-sh-podgroup": (
        ("scheduling.volcano.sh", "v1beta1", "PodGroup"),
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g"},
            "spec": {"minMember": 2, "queue": "default", "minResources": {"cpu": "2"}},
        },
    ),
    "/mutate/scheduling-volcano-sh-queue": (
        ("scheduling.volcano.sh", "v1beta1", "Queue"),
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "q"},
            "spec": {"weight": 2, "capability": {"cpu": "8"}},
        },
    ),
    "/mutate/bus-volcano-sh-command": (
        ("bus.volcano.sh", "v1alpha1", "Command"),
        {
            "apiVersion": "bus.volcano.sh/v1alpha1",
            "kind": "Command",
            "metadata": {"generateName": "q-closequeue-", "annotations": {"vbridge.io/command-author": "{}"}},
            "action": "CloseQueue",
            "target": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": "q", "uid": "u"},
        },
    ),
}

# Objects using more of what the adapters read (sizes, queues, policies, plugins), so mutations
# reach it too.
_CONF = {
    "spark.executor.memory": "2g",
    "spark.executor.memoryOverhead": "512m",
    "spark.kubernetes.memoryOverheadFactor": "0.2",
    "spark.memory.offHeap.enabled": "true",
    "spark.memory.offHeap.size": "1g",
    "spark.executor.pyspark.memory": "1g",
    "spark.driver.minMemoryOverhead": "400m",
    "spark.kubernetes.executor.request.cores": "500m",
}
_DYNAMIC = {"enabled": True, "initialExecutors": 1, "minExecutors": 1, "maxExecutors": 4}
_POLICY = {
    "minAvailable": 2,
    "queue": "default",
    "priorityClass": "high",
    "minResources": {"cpu": "2", "memory": "4Gi"},
}
_TEMPLATE_META = {"labels": {"app": "x"}, "annotations": {"a": "b"}}
_SIZED = kf.replica(2, kf.container("main", "1", "1Gi", gpu=1), priority_class="high")
_SIZED["template"]["metadata"] = _TEMPLATE_META


def _kubeflow(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    obj["spec"].update(runPolicy={"schedulingPolicy": dict(_POLICY)}, **spec)
    return obj


def _task(name: str, replicas: int, **extra: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    template = {"metadata": dict(_TEMPLATE_META), "spec": {"containers": [container]}}
    return {"name": name, "replicas": replicas, "template": template, **extra}


RICH: dict[str, list[dict[str, Any]]] = {
    "/mutate/sparkoperator-k8s-io-sparkapplication": [
        spark.app(
            batchScheduler="volcano",
            type="Python",
            memoryOverheadFactor="0.3",
            batchSchedulerOptions={"queue": "default", "priorityClassName": "high"},
            dynamicAllocation=dict(_DYNAMIC),
            sparkConf=dict(_CONF),
            executor={"gpu": {"name": "nvidia.com/gpu", "quantity": 1}, "coreRequest": "500m", "labels": {"a": "b"}},
            driver={"annotations": {"a": "b"}, "schedulerName": "volcano", "memoryOverhead": "1g"},
        ),
        spark.app(batchScheduler="volcano", mode="client", batchSchedulerOptions={"resources": {"cpu": "4"}}),
    ],
    "/mutate/sparkoperator-k8s-io-sparkconnect": [
        spark.connect(dynamicAllocation=dict(_DYNAMIC), sparkConf=dict(_CONF), server={"cores": 2, "memory": "2g"})
    ],
    "/mutate/kubeflow-org-tfjob": [_kubeflow(kf.tfjob("t", PS=kf.replica(1), Worker=_SIZED, Chief=kf.replica(1)))],
    "/mutate/kubeflow-org-pytorchjob": [_kubeflow(kf.pytorchjob("p", Master=kf.replica(1), Worker=_SIZED))],
    "/mutate/kubeflow-org-mpijob-v1": [_kubeflow(kf.mpijob("m", "v1", Launcher=kf.replica(1), Worker=_SIZED))],
    "/mutate/kubeflow-org-mpijob": [
        _kubeflow(
            kf.mpijob("m", Launcher=kf.replica(1), Worker=_SIZED),
            launcherCreationPolicy="WaitForWorkersReady",
            runLauncherAsWorker=True,
        )
    ],
    "/mutate/kubeflow-org-xgboostjob": [_kubeflow(kf.xgboostjob("x", Master=kf.replica(1), Worker=_SIZED))],
    "/mutate/kubeflow-org-paddlejob": [
        _kubeflow(kf.paddlejob("p", Master=kf.replica(1), Worker=_SIZED), elasticPolicy={"minReplicas": 1})
    ],
    "/mutate/kubeflow-org-jaxjob": [_kubeflow(kf.jaxjob("j", Worker=_SIZED))],
    "/mutate/jobset-x-k8s-io-jobset": [js.torchtune("tune"), js.everything("tpu")],
    "/mutate/batch-volcano-sh-job": [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "mpi", "annotations": {"scheduling.volcano.sh/queue-name": "default"}},
            "spec": {
                "minAvailable": 2,
                "minSuccess": 1,
                "maxRetry": 2,
                "queue": "default",
                "priorityClassName": "high",
                "plugins": {"ssh": [], "svc": ["--publish-not-ready-addresses"], "env": [], "mpi": ["--port=22"]},
                "policies": [{"event": "PodEvicted", "action": "RestartJob"}, {"exitCode": 3, "action": "AbortJob"}],
                "volumes": [{"mountPath": "/data", "volumeClaimName": "d"}],
                "tasks": [
                    _task("master", 1, dependsOn={"name": ["worker"], "iteration": "any"}),
                    _task(
                        "worker", 2, minAvailable=1, policies=[{"events": ["TaskCompleted"], "action": "CompleteJob"}]
                    ),
                ],
            },
        }
    ],
    "/mutate/spark-apache-org-pod": [
        spark.submit_pod("executor"),
        spark.submit_pod("driver", operator_app="pi", annotations={"scheduling.k8s.io/group-name": "spark-pi-pg"}),
    ],
    "/mutate/kubeflow-org-pod": [kf.operator_pod("t", "ps", 1, operator="pytorchjob-controller")],
    "/mutate/jobset-x-k8s-io-pod": [js.operator_pod("ds", "node")],  # a first stage's: the group named as ours
    "/mutate/scheduling-volcano-sh-podgroup": [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "annotations": {"a": "b"}},
            "spec": {
                "minMember": 3,
                "minTaskMember": {"ps": 1, "worker": 2},
                "queue": "default",
                "priorityClassName": "high",
                "minResources": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"},
            },
        }
    ],
    "/mutate/scheduling-volcano-sh-queue": [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "child"},
            "spec": {
                "weight": 1,
                "priority": 10,
                "parent": "root",
                "reclaimable": True,
                "capability": {"cpu": "8", "memory": "16Gi"},
                "deserved": {"cpu": "4"},
                "guarantee": {"resource": {"cpu": "1"}},
            },
        }
    ],
    "/mutate/bus-volcano-sh-command": [
        {
            "apiVersion": "bus.volcano.sh/v1alpha1",
            "kind": "Command",
            "metadata": {"name": "j-abortjob-x", "ownerReferences": [{"kind": "Job", "name": "j", "uid": "u"}]},
            "action": "AbortJob",
            "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "u"},
        }
    ],
}
# Who asks: most reviews carry a userInfo (as the apiserver always sends), some an odd one.
