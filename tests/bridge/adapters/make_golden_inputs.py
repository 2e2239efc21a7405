"""Write the golden case inputs (run once; expected values are then generated and reviewed)."""

from __future__ import annotations

import pathlib
from typing import Any

import yaml

from tests.builders import jobset as js
from tests.builders import kubeflow as kf
from tests.builders import spark

GOLDEN = pathlib.Path(__file__).parent / "golden"
TEAM = {"namespace": "team-a"}


def case(name: str, inp: dict[str, Any], context: dict[str, Any] | None = None, adapter: str | None = None) -> None:
    body: dict[str, Any] = {"input": inp}
    if adapter:
        body["adapter"] = adapter
    body["context"] = {**TEAM, **(context or {})}
    body["expected"] = None
    (GOLDEN / f"{name}.yaml").write_text(yaml.safe_dump(body, sort_keys=False, width=120))


def main() -> None:
    GOLDEN.mkdir(exist_ok=True)
    seed = yaml.safe_load(pathlib.Path("examples/sparkapplication-pi-volcano.yaml").read_text())
    seed["metadata"]["namespace"] = "team-a"
    case("spark-app-seed-volcano", seed)
    plain = yaml.safe_load(pathlib.Path("examples/sparkapplication-pi.yaml").read_text())
    plain["metadata"]["namespace"] = "team-a"
    case("spark-app-not-opted-in", plain)
    case("spark-app-namespace-opt-in", plain, {"namespaceLabels": {"vbridge.io/gang-scheduling": "enabled"}})
    case(
        "spark-app-python-overhead",
        spark.app(
            batchScheduler="volcano",
            type="Python",
            mainApplicationFile="local:///opt/spark/examples/pi.py",
            driver={"memory": "1g"},
            executor={"memory": "2g", "instances": 3, "coreRequest": "500m"},
        ),
    )
    case(
        "spark-app-dynamic-allocation",
        spark.app(
            batchScheduler="volcano",
            executor={"instances": 1},
            dynamicAllocation={"enabled": True, "initialExecutors": 2, "minExecutors": 3, "maxExecutors": 10},
        ),
    )
    case(
        "spark-app-options-queue-priority-resources",
        spark.app(
            batchScheduler="volcano",
            batchSchedulerOptions={
                "queue": "spark",
                "priorityClassName": "high",
                "resources": {"cpu": "10", "memory": "20Gi"},
            },
        ),
        {"queues": {"default": {}, "spark": {}}},
    )
    case(
        "spark-app-explicit-overhead-and-factor",
        spark.app(
            batchScheduler="volcano",
            memoryOverheadFactor="0.2",
            driver={"memory": "4g"},
            executor={"memory": "8g", "memoryOverhead": "1g", "gpu": {"name": "nvidia.com/gpu", "quantity": 1}},
        ),
    )
    case("spark-app-client-mode-executors-only", spark.app(batchScheduler="volcano", mode="client"))
    case("spark-app-queue-missing", spark.app(batchScheduler="volcano", batchSchedulerOptions={"queue": "nope"}))
    case(
        "spark-app-queue-closed",
        spark.app(batchScheduler="volcano", batchSchedulerOptions={"queue": "old"}),
        {"queues": {"default": {}, "old": {"state": "Closed"}}},
    )
    case(
        "spark-app-queue-foreign-namespace",
        spark.app(batchScheduler="volcano", batchSchedulerOptions={"queue": "finance"}),
        {"queues": {"default": {}, "finance": {"allowed": ["finance-*"]}, "shared": {}}},
    )
    case(
        "spark-app-queue-from-namespace-annotation",
        spark.app(batchScheduler="volcano"),
        {"namespaceAnnotations": {"scheduling.volcano.sh/queue-name": "team"}, "queues": {"default": {}, "team": {}}},
    )
    case("spark-app-yunikorn-not-ours", spark.app(batchScheduler="yunikorn"))
    case("spark-app-negative-instances", spark.app(batchScheduler="volcano", executor={"instances": -2}))
    case("spark-app-bad-memory", spark.app(batchScheduler="volcano", executor={"memory": "lots"}))

    tf = yaml.safe_load(pathlib.Path("examples/tfjob-v1.yaml").read_text())
    tf["metadata"]["namespace"] = "team-a"
    case("tfjob-seed-v1", tf)
    case(
        "tfjob-priority-order-min-available",
        {
            **kf.tfjob(
                "ranked",
                Worker=kf.replica(4, kf.container("tensorflow", "2", "4Gi")),
                PS=kf.replica(2, kf.container("tensorflow", "1", "2Gi"), priority_class="high"),
                Chief=kf.replica(1, kf.container("tensorflow", "1", "1Gi", limits=True)),
            ),
        }
        | {
            "spec": {
                **kf.tfjob(
                    "ranked",
                    Worker=kf.replica(4, kf.container("tensorflow", "2", "4Gi")),
                    PS=kf.replica(2, kf.container("tensorflow", "1", "2Gi"), priority_class="high"),
                    Chief=kf.replica(1, kf.container("tensorflow", "1", "1Gi", limits=True)),
                )["spec"],
                "runPolicy": {"schedulingPolicy": {"minAvailable": 4, "queue": "research"}},
            }
        },
        {"priorities": {"high": 1000}, "queues": {"default": {}, "research": {}}},
    )
    case(
        "tfjob-queue-from-job-annotation",
        kf.job(
            "TFJob",
            "annotated",
            "tfReplicaSpecs",
            {"Worker": kf.replica(2, kf.container("tensorflow", "1", "1Gi"))},
            annotations={"scheduling.volcano.sh/queue-name": "batch"},
        ),
        {"queues": {"default": {}, "batch": {}}},
    )
    case("tfjob-negative-replicas", kf.tfjob("bad", Worker=kf.replica(-1)))
    case("tfjob-no-replica-specs", kf.job("TFJob", "empty", "tfReplicaSpecs", {}))
    case(
        "pytorchjob-elastic",
        yaml.safe_load(pathlib.Path("examples/pytorchjob-elastic.yaml").read_text())
        | {"metadata": {"name": "elastic-example", "namespace": "team-a"}},
    )
    case(
        "pytorchjob-master-workers-gpu",
        kf.pytorchjob(
            "ddp",
            Master=kf.replica(1, kf.container("pytorch", "2", "8Gi", gpu=1)),
            Worker=kf.replica(3, kf.container("pytorch", "2", "8Gi", gpu=1)),
        ),
    )
    mpi = yaml.safe_load(pathlib.Path("examples/mpijob-v2beta1.yaml").read_text())
    mpi["metadata"]["namespace"] = "team-a"
    case("mpijob-v2beta1-at-startup", mpi)
    waiting = yaml.safe_load(pathlib.Path("examples/mpijob-v2beta1.yaml").read_text())
    waiting["metadata"] = {"name": "waits", "namespace": "team-a"}
    waiting["spec"]["launcherCreationPolicy"] = "WaitForWorkersReady"
    case("mpijob-v2beta1-wait-for-workers-ready", waiting)
    case(
        "mpijob-v1-launcher-counts",
        kf.mpijob(
            "legacy",
            version="v1",
            Launcher=kf.replica(1, kf.container("launcher", "1", "2Gi", limits=True)),
            Worker=kf.replica(2, kf.container("worker", "2", "4Gi", limits=True)),
        ),
    )
    training_operator_kinds()

    case("spark-pod-driver-unannotated-is-gated", spark.submit_pod("driver"), adapter="spark.apache.org/pod")
    case(
        "spark-pod-driver-feature-step-annotated",
        spark.submit_pod(
            "driver", annotations={"scheduling.k8s.io/group-name": "spark-0123456789abcdef0123456789abcdef-podgroup"}
        ),
        adapter="spark.apache.org/pod",
    )
    case("spark-pod-executor-client-mode", spark.submit_pod("executor"), adapter="spark.apache.org/pod")
    case(
        "spark-pod-default-scheduler-not-ours",
        spark.submit_pod("driver", scheduler="default-scheduler"),
        adapter="spark.apache.org/pod",
    )
    for role, name in (
        ("driver", "spark-pod-operator-launched"),
        ("executor", "spark-pod-operator-launched-executor-gets-our-scheduler"),
    ):
        annotations = {"scheduling.k8s.io/group-name": "spark-pi-pg"}
        pod = spark.submit_pod(role, scheduler="default-scheduler", operator_app="pi", annotations=annotations)
        case(name, pod, adapter="spark.apache.org/pod")
    case(
        "spark-app-executor-on-another-scheduler-not-labelled",
        spark.app(batchScheduler="volcano", executor={"schedulerName": "yunikorn"}),
    )
    gated = spark.submit_pod("driver")
    case(
        "spark-pod-driver-with-conf-and-template",
        gated,
        {
            "conf": {
                "spark.executor.instances": "4",
                "spark.executor.memory": "2g",
                "spark.executor.cores": "2",
                "spark.kubernetes.scheduler.volcano.podGroupTemplateFile": "/opt/templates/high.yaml",
            },
            "template": {
                "metadata": {"labels": {"team": "a"}},
                "spec": {"queue": "spark", "priorityClassName": "high", "minMember": 1},
            },
            "queues": {"default": {}, "spark": {}},
        },
        adapter="spark.apache.org/pod",
    )
    case("kubeflow-pod-unstamped", kf.operator_pod("mnist", "worker"), adapter="kubeflow.org/pod")
    stamped = kf.operator_pod("mnist", "ps")
    stamped["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "mnist"}
    case("kubeflow-pod-already-stamped", stamped, adapter="kubeflow.org/pod")
    jobsets()


def jobsets() -> None:
    """JobSet cases: the Trainer's renderings and each stage rule; the DeepSpeed one on native too."""
    case("jobset-deepspeed-launcher-after-nodes-ready", js.deepspeed(nodes=3))
    case("jobset-torchtune-initializers-then-trainer", js.torchtune(nodes=2))
    case(
        "jobset-all-at-once-queue-label-and-kueue",
        js.jobset(
            "sweep",
            js.rjob("leader", spec=js.pod("1", "1Gi", priority_class="high")),
            js.rjob("workers", replicas=2, parallelism=2),
            labels={"scheduling.volcano.sh/queue-name": "research", "kueue.x-k8s.io/queue-name": "lq"},
        ),
        {"queues": {"default": {}, "research": {}}, "priorities": {"high": 1000}},
    )
    case(
        "jobset-in-order-exclusive-topology",
        js.jobset(
            "tpu",
            js.rjob("coordinator"),
            js.rjob("slices", replicas=2, parallelism=4, completions=4),
            in_order=True,
            annotations={"alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"},
        ),
    )
    later = js.jobset("bad", js.rjob("a"), js.rjob("b", depends={"c": "Ready"}), js.rjob("c"))
    case("jobset-depends-on-a-later-job-denied", later)
    case("jobset-managed-elsewhere-not-ours", js.jobset("mk", js.rjob("a"), managedBy="kueue.x-k8s.io/multikueue"))
    native = js.deepspeed(nodes=3)
    GOLDEN.joinpath("native").mkdir(exist_ok=True)
    body = {"input": native, "context": {**TEAM, "backend": "native"}, "expected": None}
    path = GOLDEN / "native" / "jobset-deepspeed-launcher-after-nodes-ready.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False, width=120))


def training_operator_kinds() -> None:
    """XGBoostJob, PaddleJob and JAXJob: the training-operator's gang (every replica), on both backends."""
    xgb = kf.xgboostjob(
        "iris",
        Master=kf.replica(1, kf.container("xgboost", "1", "2Gi")),
        Worker=kf.replica(2, kf.container("xgboost", "2", "4Gi")),
    )
    paddle = kf.paddlejob("fleet", Worker=kf.replica(3, kf.container("paddle", "2", "4Gi", gpu=1)))
    paddle["spec"]["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": 3}
    jax = kf.jaxjob("spmd", Worker=kf.replica(4, kf.container("jax", "4", "8Gi", limits=True)))
    for name, job in (("xgboostjob-master-workers", xgb), ("paddlejob-elastic-gangs-every-replica", paddle)):
        case(name, job)
        case(f"native/{name}", job, {"backend": "native"})
    case("jaxjob-workers", jax)
    case("native/jaxjob-workers", jax, {"backend": "native"})
    ranked = kf.xgboostjob(
        "ranked",
        Master=kf.replica(1, kf.container("xgboost", "1", "1Gi")),
        Worker=kf.replica(3, kf.container("xgboost", "2", "2Gi"), priority_class="high"),
    )
    ranked["spec"]["runPolicy"] = {"schedulingPolicy": {"minAvailable": 2, "queue": "research"}}
    facts = {"priorities": {"high": 1000}, "queues": {"default": {}, "research": {}}}
    case("xgboostjob-priority-order-min-available", ranked, facts)
    case("xgboostjob-no-master", kf.xgboostjob("headless", Worker=kf.replica(2)))
    case("xgboostjob-two-masters", kf.xgboostjob("twins", Master=kf.replica(2), Worker=kf.replica(2)))
    case("paddlejob-unknown-replica-type", kf.paddlejob("odd", Master=kf.replica(1), PS=kf.replica(1)))
    case("jaxjob-master-denied", kf.jaxjob("led", Master=kf.replica(1), Worker=kf.replica(2)))


if __name__ == "__main__":
    main()
