"""Admission through the real apiserver: each kind applied unchanged gets its PodGroup and stamps.

The apiserver calls our HTTPS server through a MutatingWebhookConfiguration generated from the
adapter registry; the PodGroups are made by the reconcilers with an ownerReference to the job.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from tests.builders import kubeflow as kf
from tests.builders import spark
from tests.support import apiserver, bridgethread, upstream
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration
ROOT = pathlib.Path(__file__).resolve().parents[2]
GROUP_NAME = "scheduling.k8s.io/group-name"


@pytest.fixture(scope="module", autouse=True)
def crds(control_plane: cluster.LocalCluster) -> None:
    upstream.install(control_plane, "spark-operator", "training-operator", "mpi-operator")


def example(name: str) -> dict[str, Any]:
    body: dict[str, Any] = yaml.safe_load((ROOT / "examples" / name).read_text())
    body["metadata"].pop("namespace", None)
    return body


def create(api: k8s.ApiClient, ns: str, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    body["metadata"].pop("namespace", None)
    group, version = body["apiVersion"].split("/")
    out: dict[str, Any] = k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        group, version, ns, body["kind"].lower() + "s", body, **kwargs
    )
    return out


def podgroup(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any] | None:
    try:
        pg: dict[str, Any] = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            *apiserver.PG, ns, "podgroups", name
        )
        return pg
    except k8s.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_sparkapplication_seed_gets_its_group(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    app = create(api_client, namespace, example("sparkapplication-pi-volcano.yaml"))
    assert app["spec"]["driver"]["annotations"][GROUP_NAME] == "spark-spark-pi-pg"
    assert app["spec"]["executor"]["schedulerName"] == "volcano"
    assert app["spec"]["sparkConf"]["spark.kubernetes.scheduler.name"] == "volcano"
    pg = apiserver.eventually(lambda: podgroup(api_client, namespace, "spark-spark-pi-pg"), what="the Spark PodGroup")
    assert pg["spec"] == {"minMember": 1, "queue": "default", "minResources": {"cpu": "2", "memory": "1792Mi"}}
    owner = pg["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "SparkApplication",
        "spark-pi",
        app["metadata"]["uid"],
        True,
    )


def test_kubeflow_kinds_stamped_and_grouped_and_collected(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    tf = create(api_client, namespace, example("tfjob-v1.yaml"))
    for role, spec in tf["spec"]["tfReplicaSpecs"].items():
        template = spec["template"]
        assert template["metadata"]["annotations"] == {GROUP_NAME: "example-job", "volcano.sh/task-spec": role.lower()}
        assert template["spec"]["schedulerName"] == "volcano"
    pg = apiserver.eventually(lambda: podgroup(api_client, namespace, "example-job"), what="the TFJob PodGroup")
    assert pg["spec"]["minMember"] == 4 and pg["spec"]["minTaskMember"] == {"master": 1, "ps": 2, "worker": 1}

    torch = create(api_client, namespace, example("pytorchjob-elastic.yaml"))
    assert torch["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["metadata"]["annotations"][GROUP_NAME]
    pg = apiserver.eventually(
        lambda: podgroup(api_client, namespace, "elastic-example"), what="the PyTorchJob PodGroup"
    )
    assert pg["spec"]["minMember"] == 2 and pg["spec"]["minResources"] == {"cpu": "2", "memory": "2Gi"}

    mpi = example("mpijob-v2beta1.yaml")
    mpi["spec"]["launcherCreationPolicy"] = "WaitForWorkersReady"
    create(api_client, namespace, mpi)
    pg = apiserver.eventually(lambda: podgroup(api_client, namespace, "tensorflow-mnist"), what="the MPIJob PodGroup")
    assert pg["spec"]["minMember"] == 2 and pg["spec"]["minTaskMember"] == {"worker": 2}

    k8s.CustomObjectsApi(api_client).delete_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs", "example-job"
    )
    apiserver.eventually(
        lambda: podgroup(api_client, namespace, "example-job") is None,
        timeout=60,
        what="the garbage collector to remove the TFJob's PodGroup",
    )


def test_operator_pods_without_stamps_are_annotated(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    pod = kf.operator_pod("legacy", "worker", 1)
    pod["metadata"]["namespace"] = namespace
    created = core.create_namespaced_pod(namespace, pod)
    assert created.metadata.annotations == {GROUP_NAME: "legacy", "volcano.sh/task-spec": "worker"}
    assert created.spec.scheduler_name == "volcano"
    bystander = core.create_namespaced_pod(
        namespace,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "bystander"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        },
    )
    assert bystander.spec.scheduler_name == "default-scheduler" and not bystander.metadata.annotations


def _webhook_metrics(api: k8s.ApiClient, webhook: str) -> tuple[float, float]:
    """(calls made, calls skipped by matchConditions) for one of our webhooks, from the apiserver."""
    response = api.call_api("GET", api.configuration.host + "/metrics")
    response.read()
    text = response.data.decode()
    calls = skipped = 0.0
    for line in text.splitlines():
        if f'name="{webhook}"' not in line or line.startswith("#"):
            continue
        if line.startswith("apiserver_admission_webhook_admission_duration_seconds_count"):
            calls += float(line.rsplit(" ", 1)[1])
        elif line.startswith("apiserver_admission_match_condition_exclusions_total"):
            skipped += float(line.rsplit(" ", 1)[1])
    return calls, skipped


def test_pods_made_with_their_group_are_not_sent_to_the_webhook(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    hook = "pod.spark.apache.org.vbridge.io"
    # Made grouped at the source (a driver we admitted passed the label and annotation to Spark):
    # the objectSelector leaves it out, so an executor we would otherwise annotate comes out as is.
    labelled = spark.submit_pod("executor")
    labelled["metadata"].update(name="labelled-exec", namespace=namespace)
    labelled["metadata"]["labels"]["vbridge.io/grouped"] = "true"
    before = _webhook_metrics(api_client, hook)
    created = core.create_namespaced_pod(namespace, labelled)
    assert not created.metadata.annotations
    assert _webhook_metrics(api_client, hook) == before, "the apiserver called the webhook for a labelled pod"
    # Annotated by Spark itself (VolcanoFeatureStep) and already ours: nothing to add, so the
    # apiserver skips the call by the webhook's matchCondition.
    annotated = spark.submit_pod("executor", annotations={GROUP_NAME: "g-podgroup"})
    annotated["metadata"].update(name="annotated-exec", namespace=namespace)
    created = core.create_namespaced_pod(namespace, annotated)
    assert created.metadata.annotations == {GROUP_NAME: "g-podgroup"}
    calls, skipped = _webhook_metrics(api_client, hook)
    assert (calls, skipped) == (before[0], before[1] + 1)
    # An executor that still needs its group is sent, and annotated.
    plain = spark.submit_pod("executor")
    plain["metadata"].update(name="plain-exec", namespace=namespace)
    created = core.create_namespaced_pod(namespace, plain)
    assert created.metadata.annotations == {GROUP_NAME: "spark-0123456789abcdef0123456789abcdef-podgroup"}
    assert _webhook_metrics(api_client, hook)[0] == calls + 1


def test_spark_submit_driver_is_gated_until_its_group_is_complete(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    driver = spark.submit_pod("driver")
    driver["metadata"]["namespace"] = namespace
    created = core.create_namespaced_pod(namespace, driver)
    group = "spark-0123456789abcdef0123456789abcdef-podgroup"
    assert created.metadata.annotations[GROUP_NAME] == group
    assert [g.name for g in created.spec.scheduling_gates] == ["vbridge.io/podgroup"]
    # Spark will make the executors grouped itself, so the pod webhook need not be called for them.
    assert created.spec.containers[0].args[:7] == [
        "driver",
        "--conf",
        f"spark.kubernetes.executor.annotation.{GROUP_NAME}={group}",
        "--conf",
        "spark.kubernetes.executor.scheduler.name=volcano",
        "--conf",
        "spark.kubernetes.executor.label.vbridge.io/grouped=true",
    ]
    # Spark writes the conf ConfigMap right after the driver pod.
    core.create_namespaced_config_map(
        namespace,
        k8s.V1ConfigMap(
            metadata=k8s.V1ObjectMeta(name="spark-drv-abc-conf-map"),
            data={"spark.properties": "spark.executor.instances=3\nspark.executor.memory=1g\nspark.executor.cores=2\n"},
        ),
    )
    pg = apiserver.eventually(lambda: podgroup(api_client, namespace, group), what="the driver's PodGroup")
    assert pg["spec"]["minMember"] == 1
    # driver 1 cpu/896Mi + 3 executors × (2 cpu, 1024+384 Mi)
    assert pg["spec"]["minResources"] == {"cpu": "7", "memory": "5Gi"}
    assert pg["metadata"]["ownerReferences"][0]["name"] == "pi-abc-driver"
    apiserver.eventually(
        lambda: not core.read_namespaced_pod("pi-abc-driver", namespace).spec.scheduling_gates,
        what="the gate to be lifted",
    )


def test_dry_run_creates_nothing_and_foreign_queue_is_denied(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    crd = k8s.CustomObjectsApi(api_client)
    dry = create(api_client, namespace, kf.tfjob("dry", Worker=kf.replica(2)), dry_run="All")
    assert dry["spec"]["tfReplicaSpecs"]["Worker"]["template"]["metadata"]["annotations"][GROUP_NAME] == "dry"
    crd.create_cluster_custom_object(
        *apiserver.PG,
        "queues",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "finance-only", "annotations": {"vbridge.io/allowed-namespaces": "finance-*"}},
            "spec": {"weight": 1},
        },
    )
    apiserver.eventually(lambda: "finance-only" in bridge.bridge.facts.queues if bridge.bridge else False)
    app = spark.app(batchScheduler="volcano", batchSchedulerOptions={"queue": "finance-only"})
    app["metadata"] = {"name": "denied"}
    with pytest.raises(k8s.ApiException) as denied:
        create(api_client, namespace, app)
    assert denied.value.status == 403
    assert "queue 'finance-only' does not admit namespace" in denied.value.body
    app["spec"]["batchSchedulerOptions"]["queue"] = "no-such-queue"
    with pytest.raises(k8s.ApiException) as missing:
        create(api_client, namespace, app)
    assert "queue 'no-such-queue' does not exist" in missing.value.body
    assert podgroup(api_client, namespace, "dry") is None
    assert crd.list_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs")["items"] == []


def test_operator_made_podgroup_is_corrected_not_fought(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    """The spark-operator (batch scheduler on) makes spark-<app>-pg with its own minResources: ours win."""
    crd = k8s.CustomObjectsApi(api_client)
    crd.create_namespaced_custom_object(
        *apiserver.PG,
        namespace,
        "podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "spark-spark-pi-pg"},
            # what the operator computes: no default overhead, "512m" read as a Kubernetes quantity
            "spec": {"minMember": 1, "minResources": {"cpu": "2", "memory": "1024m", "nvidia.com/gpu": "0"}},
        },
    )
    app = create(api_client, namespace, example("sparkapplication-pi-volcano.yaml"))

    def corrected() -> dict[str, Any] | None:
        pg = podgroup(api_client, namespace, "spark-spark-pi-pg")
        return pg if pg and pg["spec"].get("minResources") == {"cpu": "2", "memory": "1792Mi"} else None

    pg = apiserver.eventually(corrected, what="our minResources to replace the operator's")
    assert pg["spec"]["minMember"] == 1 and pg["spec"]["queue"] == "default"
    assert any(r["uid"] == app["metadata"]["uid"] for r in pg["metadata"]["ownerReferences"])
    # the operator's later sync touches only minMember (=1, as ours): nothing changes back
    crd.patch_namespaced_custom_object(
        *apiserver.PG, namespace, "podgroups", "spark-spark-pi-pg", {"spec": {"minMember": 1}}
    )
    assert corrected() is not None


def test_finished_job_releases_its_podgroup(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    crd = k8s.CustomObjectsApi(api_client)
    create(api_client, namespace, kf.tfjob("done-soon", Worker=kf.replica(2, kf.container("tensorflow", "1", "1Gi"))))
    apiserver.eventually(lambda: podgroup(api_client, namespace, "done-soon"), what="the PodGroup")
    crd.patch_namespaced_custom_object_status(
        "kubeflow.org",
        "v1",
        namespace,
        "tfjobs",
        "done-soon",
        {
            "status": {
                "conditions": [
                    {
                        "type": "Succeeded",
                        "status": "True",
                        "reason": "TFJobSucceeded",
                        "message": "done",
                        "lastUpdateTime": "2026-11-30T00:00:00Z",
                        "lastTransitionTime": "2026-11-30T00:00:00Z",
                    }
                ]
            }
        },
    )
    apiserver.eventually(
        lambda: podgroup(api_client, namespace, "done-soon") is None,
        timeout=30,
        what="the finished job's PodGroup to be released",
    )


def test_pods_as_operators_create_them_come_out_annotated(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    mpi_worker = kf.operator_pod("pi", "worker", 0, operator="mpi-operator")
    labels = mpi_worker["metadata"]["labels"]
    del labels["training.kubeflow.org/replica-type"]
    labels["training.kubeflow.org/job-role"] = "worker"  # mpi-operator v2beta1 sets the role label
    mpi_worker["metadata"]["namespace"] = namespace
    created = core.create_namespaced_pod(namespace, mpi_worker)
    assert created.metadata.annotations == {GROUP_NAME: "pi", "volcano.sh/task-spec": "worker"}

    driver = spark.submit_pod("driver", app_id="spark-feedfacefeedfacefeedfacefeedface")
    driver["metadata"]["namespace"] = namespace
    drv = core.create_namespaced_pod(namespace, driver)
    executor = spark.submit_pod("executor", app_id="spark-feedfacefeedfacefeedfacefeedface")
    executor["metadata"]["namespace"] = namespace
    executor["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": drv.metadata.name, "uid": drv.metadata.uid, "controller": True}
    ]
    exe = core.create_namespaced_pod(namespace, executor)
    assert exe.metadata.annotations[GROUP_NAME] == "spark-feedfacefeedfacefeedfacefeedface-podgroup"
    assert exe.spec.scheduler_name == "volcano" and not exe.spec.scheduling_gates  # only drivers are gated
