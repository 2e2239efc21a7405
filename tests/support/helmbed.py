"""The helm-install test bed's pieces: its values, the ``Bed`` it hands the tests, and how the
tests read the cluster (``tests/integration/test_helm_install.py``)."""

from __future__ import annotations

import copy
import dataclasses
import pathlib
import subprocess
from typing import Any

import yaml
from kubernetes import client as k8s

from tests.support import apiserver, helminstall, runtimesim
from vbridge.localcluster import binaries

ROOT = pathlib.Path(__file__).resolve().parents[2]


CHART = ROOT / "charts" / "volcano-bridge"
NS, RELEASE, WORK = "volcano-bridge", "vb", "work"
VC, KF = ("batch.volcano.sh", "v1alpha1"), ("kubeflow.org", "v1")


RUNTIME_NODES = tuple(f"sim-run-{i}" for i in range(4))


PLAIN_NODES = tuple(f"sim-node-{i}" for i in range(3))


TAINT = ("sim.vbridge.io/runtime", "process", "NoSchedule")


COMPONENTS = ("webhook", "controllers", "scheduler")


HOOK = "uninstall"  # the pre-delete hook's ServiceAccount and Job: <release>-uninstall


QUEUES = ("scheduling.volcano.sh", "v1beta1")


KEPT_CRDS = {"jobs.batch.volcano.sh", "podgroups.scheduling.volcano.sh", "queues.scheduling.volcano.sh"}


def values() -> dict[str, Any]:
    """Our image, on the runtime nodes, and never two pods of a component on one node.

    The anti-affinity is for the test bed: the runtime's pods of one node share the node's
    network namespace, so two webhook pods there would both bind 0.0.0.0:9443 (the second
    crash-loops, and its readiness probe is answered by the first).
    """
    out: dict[str, Any] = {"image": {"repository": "localhost/volcano-bridge", "tag": "dev"}}
    for component in COMPONENTS:
        selector = {"app.kubernetes.io/instance": RELEASE, "app.kubernetes.io/component": component}
        term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": selector}}
        out[component] = {
            "nodeSelector": {"sim.vbridge.io/runtime": "process"},
            "tolerations": [{"key": TAINT[0], "operator": "Equal", "value": TAINT[1], "effect": TAINT[2]}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        }
    # The pre-delete hook's pod (``vbridge stop``) runs on a runtime node too, for real.
    out["uninstallHook"] = {k: v for k, v in out["webhook"].items() if k != "affinity"}
    return out


@dataclasses.dataclass
class Bed:
    lc: helminstall.BareCluster
    bins: binaries.Binaries
    api: k8s.ApiClient
    sim: runtimesim.RuntimeSimThread
    helm: helminstall.Helm
    keeper: helminstall.LogKeeper
    values: pathlib.Path
    notes: dict[str, Any] = dataclasses.field(default_factory=dict)

    def kubectl(self, *args: str) -> str:
        return apiserver.kubectl(self.bins, self.lc, *args)


def ready(pod: k8s.V1Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def chart_pods(bed: Bed) -> list[k8s.V1Pod]:
    items: list[k8s.V1Pod] = k8s.CoreV1Api(bed.api).list_namespaced_pod(NS).items
    return items


def all_ready(bed: Bed, replicas: dict[str, int]) -> list[k8s.V1Pod] | None:
    """Every Deployment rolled out and Available with its replicas, and only its pods, all Ready."""
    for component, want in replicas.items():
        d = k8s.AppsV1Api(bed.api).read_namespaced_deployment(f"{RELEASE}-{component}", NS)
        s = d.status
        if not (
            s.observed_generation == d.metadata.generation
            and s.updated_replicas == want
            and s.ready_replicas == want
            and s.available_replicas == want
            and (s.replicas or 0) == want
        ):
            return None
    pods = chart_pods(bed)
    live = [p for p in pods if p.metadata.deletion_timestamp is None]
    if len(pods) != sum(replicas.values()) or not all(ready(p) for p in live):
        return None
    return pods


def custom(bed: Bed, group: tuple[str, str], plural: str, ns: str | None = None) -> list[dict[str, Any]]:
    api = k8s.CustomObjectsApi(bed.api)
    out = (
        api.list_namespaced_custom_object(*group, ns, plural) if ns else api.list_cluster_custom_object(*group, plural)
    )
    items: list[dict[str, Any]] = out["items"]
    return items


def custom_resources(bed: Bed) -> dict[str, str]:
    """kind/ns/name → uid of every Queue, PodGroup, Volcano Job and TFJob."""
    out = {}
    for kind, group, plural in (
        ("Queue", QUEUES, "queues"),
        ("PodGroup", apiserver.PG, "podgroups"),
        ("Job", VC, "jobs"),
        ("TFJob", KF, "tfjobs"),
    ):
        for o in custom(bed, group, plural):
            meta = o["metadata"]
            out[f"{kind}/{meta.get('namespace', '')}/{meta['name']}"] = meta["uid"]
    return out


def vcjob(bed: Bed, name: str) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(bed.api).get_namespaced_custom_object(*VC, WORK, "jobs", name)
    return out


def phase(bed: Bed, name: str) -> str:
    return str(((vcjob(bed, name).get("status") or {}).get("state") or {}).get("phase", ""))


def podgroup(bed: Bed, name: str) -> dict[str, Any] | None:
    try:
        out: dict[str, Any] = k8s.CustomObjectsApi(bed.api).get_namespaced_custom_object(
            *apiserver.PG, WORK, "podgroups", name
        )
        return out
    except k8s.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def scheduler_leader(bed: Bed) -> str:
    """The holder of the scheduler's Lease (``<hostname>_<pid>``: the runtime gives no pod its own hostname)."""
    lease = k8s.CoordinationV1Api(bed.api).read_namespaced_lease("volcano-scheduler", NS)
    return str(lease.spec.holder_identity or "")


def bound(bed: Bed, selector: str, count: int) -> list[k8s.V1Pod] | None:
    pods = k8s.CoreV1Api(bed.api).list_namespaced_pod(WORK, label_selector=selector).items
    if len(pods) != count or not all(p.spec.node_name and p.status.phase == "Running" for p in pods):
        return None
    return list(pods)


def diagnose(bed: Bed) -> str:
    """What the chart's pods are doing: their status, the namespace's events, their output."""
    lines = []
    for p in chart_pods(bed):
        states = [(c.name, c.ready, c.restart_count, c.state.to_dict()) for c in p.status.container_statuses or []]
        lines.append(f"pod {p.metadata.name} on {p.spec.node_name} {p.status.phase} {states}")
    for e in k8s.CoreV1Api(bed.api).list_namespaced_event(NS).items[-40:]:
        lines.append(f"event {e.involved_object.kind}/{e.involved_object.name} {e.reason}: {e.message}")
    for name, text in bed.keeper.logs().items():
        lines.append(f"--- {name}\n" + "\n".join(text.splitlines()[-15:]))
    return "\n".join(lines)


def eventually_diagnosed(bed: Bed, probe: Any, timeout: float, what: str) -> Any:
    try:
        return apiserver.eventually(probe, timeout, what)
    except AssertionError:
        print(diagnose(bed))
        raise


def submit_mpi(bed: Bed) -> dict[str, Any]:
    """The MPI seed (``mpi_job``) created in ``WORK`` once the chart's webhook admits it; the Job as admitted."""
    custom = k8s.CustomObjectsApi(bed.api)
    job: dict[str, Any] = apiserver.eventually(
        lambda: custom.create_namespaced_custom_object(*VC, WORK, "jobs", mpi_job()), 30, "the webhook to admit"
    )
    return job


def mpi_job() -> dict[str, Any]:
    body: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "volcano-job-mpi.yaml").read_text())
    master = body["spec"]["tasks"][0]
    assert master["name"] == "mpimaster"
    master["template"].setdefault("metadata", {})["annotations"] = {"sim.vbridge.io/run-seconds": "3"}
    return body


def tfjob_pods(tf: dict[str, Any]) -> list[dict[str, Any]]:
    """The pods of a (stamped) TFJob, as the training-operator makes them from its templates."""
    name = tf["metadata"]["name"]
    owner = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": name, "uid": tf["metadata"]["uid"]}
    out = []
    for role, spec in tf["spec"]["tfReplicaSpecs"].items():
        for i in range(spec["replicas"]):
            template = copy.deepcopy(spec["template"])
            template["metadata"].update(
                name=f"{name}-{role.lower()}-{i}",
                labels={
                    "training.kubeflow.org/job-name": name,
                    "training.kubeflow.org/replica-type": role.lower(),
                    "training.kubeflow.org/replica-index": str(i),
                },
                ownerReferences=[{**owner, "controller": True, "blockOwnerDeletion": True}],
            )
            out.append(template)
    return out


def leftovers(bed: Bed) -> dict[str, list[str]]:
    namespaced = bed.kubectl("api-resources", "--verbs=list", "--namespaced=true", "-o", "name").split()
    skip = {"events", "events.events.k8s.io"}
    in_ns = bed.kubectl("get", ",".join(r for r in namespaced if r not in skip), "-n", NS, "-o", "name").split()
    builtin = {"configmap/kube-root-ca.crt", "serviceaccount/default"}
    cluster_wide = bed.kubectl(
        "get",
        "clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations,"
        "customresourcedefinitions,priorityclasses",
        "-l",
        f"app.kubernetes.io/instance={RELEASE}",
        "-o",
        "name",
    ).split()
    return {"namespace": sorted(set(in_ns) - builtin), "cluster": sorted(cluster_wide)}


def kubectl_out(bed: Bed, *args: str) -> str:
    out = subprocess.run(
        [str(bed.bins.path("kubectl")), f"--kubeconfig={bed.lc.kubeconfig}", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip()
