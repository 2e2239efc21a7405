"""The chart's ``volcano.external=true`` mode, installed beside Volcano's own components.

On a test bed of its own (``besidevolcano.running``): the helm bed without any CRD or Queue,
two runtime nodes (network namespaces; the chart's pods run there as real ``vbridge``
processes, placed by the built kube-scheduler), three plain simulated nodes of 8 cpu for the
workloads; Volcano v1.14.1's own ``vc-scheduler`` (the conf of Volcano's Helm chart: actions
enqueue, allocate, backfill; plugins priority, gang, conformance, overcommit, drf, predicates,
proportion, nodeorder, binpack) and ``vc-controller-manager`` as local processes, with Volcano's
CRDs (``tools/build-volcano.sh``); the real training-operator (TFJob only: its MPIJob v1 CRD has
the name of mpi-operator's), mpi-operator and spark-operator, all with their default gang flags
(none).

1. ``helm install --set volcano.external=true`` into a namespace enforcing Pod Security
   ``restricted``: only the webhook and controllers Deployments, Ready; no scheduler, no CRD, no
   Queue, no Volcano Job controller (``--no-vcjobs``) in the release; Volcano's CRDs and Queues
   untouched.
2. The seed SparkApplication, TFJob and MPIJob (``examples/``, unchanged but for the namespace):
   each gets one PodGroup, ours (owned by the job), which Volcano's scheduler takes through
   Inqueue to Running; every pod is bound by Volcano (its ``Scheduled`` event is reported by
   ``volcano``, and the audit log's ``pods/binding`` creates are all by Volcano's scheduler's
   ServiceAccount, none by ours) and the operators see the jobs through to success.
3. A Volcano Job (the MPI seed) is still defaulted by our webhook (queue, schedulerName), and run
   by Volcano's own controller manager: it makes the job's PodGroup (the audit log says so) and
   pods, Volcano's scheduler binds them, the job Completes.
4. All or nothing: a TFJob of 4 workers of 5 cpu, which fits the cluster's capacity (Volcano
   enqueues it) but not its nodes (3 nodes of 8 cpu hold one each), stays Pending with no pod
   bound until Volcano reports its gang unschedulable; a fourth node joins and Volcano binds all
   four.
5. The table of what ran (kind, PodGroup, its phases as watched, pods bound, who reported their
   ``Scheduled`` events and who created their bindings, create to all bound): every bind in the
   namespace was Volcano's scheduler's, and the apiserver refused our ServiceAccounts nothing.

What happens when Volcano's admission webhooks (``vc-webhook-manager``) are also installed,
from Volcano's code (``pkg/webhooks/admission``): v1.12 and later enable by default
``/jobs/mutate``, ``/jobs/validate``, ``/podgroups/validate``, ``/queues/mutate``,
``/queues/validate`` (and hypernodes, cronjobs):

- ``/podgroups/validate`` (CREATE): the PodGroup's queue must exist and be ``Open``. Our
  reconcilers' PodGroups pass: our admission already denied a job whose queue is missing or not
  Open; a queue closed between admission and the PodGroup's create makes the create fail, and
  the reconciler retries and reports it in an event.
- ``/jobs/mutate`` and ``/jobs/validate``: Volcano Jobs are defaulted twice (queue ``default``,
  ``schedulerName``, ``maxRetry`` 3, ``minAvailable``, the mpi/ssh/svc plugins), to the same
  values; the validation (queue Open and a leaf, task names, policies) is Volcano's own and runs
  as it would without us. Our Volcano Job webhook then changes nothing that Volcano's has not.
- ``/queues/*``: defaults and checks Queues; we create none in this mode.
- ``/pods/mutate`` and ``/pods/validate`` are off by default since v1.12; turned on, the first
  applies resource-group placement (only with an admission ConfigMap) and the second checks only
  the ``volcano.sh/jdb-*`` annotations. Before v1.12 (v1.6 to v1.11, on by default), the pod
  validation denied a pod asking for ``volcano`` whose ``scheduling.k8s.io/group-name`` PodGroup
  did not exist yet: the operators' pods are created after our reconciler made the group (a
  denied create is retried), but a spark-submit driver is created before its group exists (our
  reconciler makes ``<appId>-podgroup`` from the driver), so spark-submit without Spark's own
  ``VolcanoFeatureStep`` (which creates the group first) fails there: disable ``/pods/validate``
  (``custom.enabled_admissions``) on such a Volcano. Before v1.6 it also denied pods whose group
  was still Pending.
- ``/podgroups/mutate`` (on by default before v1.12): a PodGroup in queue ``default`` in a
  namespace annotated ``scheduling.volcano.sh/queue-name`` is moved to that queue at create; our
  queue resolution reads the same annotation, so both agree.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from tests.support import apiserver, besidevolcano, helmbed, helminstall, operatorseeds, simthread
from vbridge.localcluster import binaries, volcano
from vbridge.nodesim import nodes

pytestmark = [pytest.mark.integration, pytest.mark.operators]
WORK = besidevolcano.WORK
KF2, JOB_NAME, SEEDS = operatorseeds.KF2, operatorseeds.JOB_NAME, operatorseeds.SEEDS
seed, condition = operatorseeds.seed, operatorseeds.condition


@pytest.fixture(scope="module")
def env(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[besidevolcano.Beside]:
    with besidevolcano.running(bins, tmp_path_factory.mktemp("beside-volcano")) as beside:
        yield beside


def queue(bed: helmbed.Bed, name: str) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(bed.api).get_cluster_custom_object(*helmbed.QUEUES, "queues", name)
    return out


def pod_names(bed: helmbed.Bed, selector: str, count: int) -> list[str] | None:
    found = [p["metadata"]["name"] for p in apiserver.pods(bed.api, WORK, selector)]
    return found if len(found) == count else None


def ran(bed: helmbed.Bed) -> list[dict[str, Any]]:
    """What the tests ran, for the table: kind, group, bound pod names, created and bind times."""
    out: list[dict[str, Any]] = bed.notes.setdefault("ran", [])
    return out


@pytest.mark.timeout(300)
def test_install_beside_volcano_runs_only_webhooks_and_reconcilers(env: besidevolcano.Beside) -> None:
    bed = env.bed
    core = k8s.CoreV1Api(bed.api)
    labels = {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
    }
    core.create_namespace({"metadata": {"name": helmbed.NS, "labels": labels}})
    # Volcano's scheduler made the default Queue and its controller manager opened it.
    apiserver.eventually(
        lambda: (queue(bed, "default").get("status") or {}).get("state") == "Open", 60, "Volcano's default Queue Open"
    )
    crds_before = {
        c.metadata.name: c.metadata.resource_version
        for c in k8s.ApiextensionsV1Api(bed.api).list_custom_resource_definition().items
    }
    started = time.monotonic()
    bed.helm("install", helmbed.RELEASE, str(helmbed.CHART), "-n", helmbed.NS, "-f", str(bed.values))
    helm_took = time.monotonic() - started
    replicas = {"webhook": 2, "controllers": 2}
    pods = helmbed.eventually_diagnosed(
        bed, lambda: helmbed.all_ready(bed, replicas), 120, "every Deployment Available, every pod Ready"
    )
    took = time.monotonic() - started
    bed.notes["install"] = (helm_took, took)
    print(f"\nbeside Volcano: helm install returned after {helm_took:.1f} s; every pod Ready after {took:.1f} s")
    assert all(c.restart_count == 0 for p in pods for c in p.status.container_statuses)

    rendered = [d for d in yaml.safe_load_all(bed.helm("get", "manifest", helmbed.RELEASE, "-n", helmbed.NS)) if d]
    rendered += [d for d in yaml.safe_load_all(bed.helm("get", "hooks", helmbed.RELEASE, "-n", helmbed.NS)) if d]
    kinds = {(d["kind"], d["metadata"]["name"]) for d in rendered}
    assert {n for k, n in kinds if k == "Deployment"} == {
        f"{helmbed.RELEASE}-webhook",
        f"{helmbed.RELEASE}-controllers",
    }
    assert not {k for k, _ in kinds} & {"CustomResourceDefinition", "Queue"}, sorted(kinds)
    assert not [n for _, n in kinds if "scheduler" in n], sorted(kinds)
    [controllers] = [
        d for d in rendered if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-controllers")
    ]
    args = controllers["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--no-vcjobs" in args and "--scheduler-name=volcano" in args
    # Volcano's CRDs and Queues are as Volcano made them: none changed, none adopted by the release.
    crds_after = {
        c.metadata.name: c.metadata.resource_version
        for c in k8s.ApiextensionsV1Api(bed.api).list_custom_resource_definition().items
    }
    assert {n: v for n, v in crds_after.items() if n in crds_before} == crds_before
    for name in ("default", "root"):
        assert "meta.helm.sh/release-name" not in (queue(bed, name)["metadata"].get("annotations") or {})
    config = k8s.AdmissionregistrationV1Api(bed.api).read_mutating_webhook_configuration(helmbed.RELEASE)
    assert config.webhooks and all(w.client_config.ca_bundle for w in config.webhooks)


@pytest.mark.timeout(600)
def test_seed_jobs_are_gang_scheduled_by_volcano(env: besidevolcano.Beside) -> None:
    for record in operatorseeds.run(env):  # Volcano's scheduler binds them (the last test checks who did)
        ran(env.bed).append(record)


@pytest.mark.timeout(300)
def test_a_volcano_job_is_run_by_volcanos_own_controller(env: besidevolcano.Beside) -> None:
    """Our webhook still defaults Volcano Jobs; Volcano's controller manager makes its group and pods."""
    bed = env.bed
    created = time.monotonic()
    job = k8s.CustomObjectsApi(bed.api).create_namespaced_custom_object(*helmbed.VC, WORK, "jobs", helmbed.mpi_job())
    assert job["spec"]["queue"] == "default" and job["spec"]["schedulerName"] == "volcano"
    group = f"lm-mpi-job-{job['metadata']['uid']}"
    tail = env.volcano.tail()
    pg = apiserver.eventually(lambda: env.recorder.group(group), 60, f"the Volcano Job's PodGroup\n{tail}")
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "Job" and pg["spec"]["minMember"] == 3
    binds = apiserver.eventually(
        lambda: env.recorder.all_bound({"volcano.sh/job-name": "lm-mpi-job"}, 3), 120, f"its 3 pods bound\n{tail}"
    )
    try:
        apiserver.eventually(lambda: helmbed.phase(bed, "lm-mpi-job") == "Completed", 120, "the Volcano Job Completed")
    except AssertionError:
        print(helmbed.vcjob(bed, "lm-mpi-job").get("status"), apiserver.pods(bed.api, WORK, "volcano.sh/job-name"))
        print(env.volcano.tail(60))
        raise
    assert besidevolcano.creators(bed.lc, WORK, "podgroups").get(group) == {volcano.CONTROLLERS_USER}
    times = sorted(b.at for b in binds.values())
    kind = "Volcano Job (Volcano's controller)"
    ran(bed).append({"kind": kind, "group": group, "names": sorted(binds), "created": created, "times": times})


@pytest.mark.timeout(300)
def test_a_gang_too_big_for_the_nodes_binds_no_pod_until_all_fit(env: besidevolcano.Beside) -> None:
    bed = env.bed
    body = seed("tfjob-v1.yaml")
    worker = copy.deepcopy(body["spec"]["tfReplicaSpecs"]["Worker"])
    worker["replicas"] = 4
    worker["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "5"}, "limits": {"cpu": "5"}}
    body["metadata"]["name"] = "too-big"
    body["spec"]["tfReplicaSpecs"] = {"Worker": worker}
    created = time.monotonic()
    k8s.CustomObjectsApi(bed.api).create_namespaced_custom_object(*helmbed.KF, WORK, "tfjobs", body)
    apiserver.eventually(
        lambda: pod_names(bed, f"{JOB_NAME}=too-big", 4), 60, f"4 pods of too-big\n{env.operators_tail()}"
    )

    def unschedulable() -> list[dict[str, Any]] | None:
        pg = helmbed.podgroup(bed, "too-big") or {}
        conds = (pg.get("status") or {}).get("conditions") or []
        # Reported after a session that knew all 4 tasks (Volcano's gang plugin: "N/4 tasks in gang unschedulable").
        gang = [c for c in conds if c["type"] == "Unschedulable" and c["status"] == "True"]
        return [c for c in gang if re.match(r"\d+/4 tasks in gang unschedulable", c.get("message", ""))] or None

    conds = apiserver.eventually(unschedulable, 60, f"Volcano to find too-big unschedulable\n{env.volcano.tail()}")
    print(f"\ntoo-big: {conds[0].get('reason')}: {conds[0].get('message')}")
    assert env.recorder.binds({JOB_NAME: "too-big"}) == {}, "a pod of the gang was bound: it does not fit whole"
    assert "Running" not in env.recorder.phases("too-big")
    waited_phases = env.recorder.phases("too-big")

    # A fourth node: now every worker fits, and Volcano binds the four at once.
    extra = simthread.SimThread(
        bed.lc.kubeconfig,
        [nodes.NodeSpec("sim-node-3", cpu=besidevolcano.NODE_CPU, memory="32Gi")],
        default_run_seconds=besidevolcano.RUN_SECONDS,
    ).start()
    try:
        binds = apiserver.eventually(
            lambda: env.recorder.all_bound({JOB_NAME: "too-big"}, 4), 120, f"the 4 workers bound\n{env.volcano.tail()}"
        )
        apiserver.eventually(lambda: "Running" in env.recorder.phases("too-big"), 60, "too-big Running")
        assert len({b.node for b in binds.values()}) == 4  # one 5-cpu worker per 8-cpu node
        times = sorted(b.at for b in binds.values())
        phases = f"{' > '.join(waited_phases)} (3 nodes) | {' > '.join(env.recorder.phases('too-big'))} (4 nodes)"
        ran(bed).append(
            {
                "kind": "TFJob (4 workers x 5 cpu)",
                "group": "too-big",
                "names": sorted(binds),
                "created": created,
                "times": times,
                "phases": phases,
                "bound": "0/4 on 3 nodes, 4/4 on 4",
            }
        )
        apiserver.eventually(
            lambda: condition(bed, helmbed.KF, "tfjobs", "too-big") == "Succeeded", 120, "too-big Succeeded"
        )
    finally:
        extra.stop()


@pytest.mark.timeout(60)
def test_volcano_bound_every_pod_and_our_accounts_were_never_refused(env: besidevolcano.Beside) -> None:
    bed = env.bed
    by_event = besidevolcano.bound_by(bed.api, WORK)
    by_audit = besidevolcano.binders(bed.lc, WORK)
    table = []
    assert len(ran(bed)) == len(SEEDS) + 2, [r["kind"] for r in ran(bed)]
    for r in ran(bed):
        names, times = r["names"], r["times"]
        reported = set().union(*(by_event.get(n, set()) for n in names))
        users = set().union(*(by_audit.get(n, set()) for n in names))
        assert reported == {"volcano"}, (r["kind"], {n: by_event.get(n) for n in names})
        assert users == {volcano.SCHEDULER_USER}, (r["kind"], {n: by_audit.get(n) for n in names})
        table.append(
            {
                "kind": r["kind"],
                "PodGroup": r["group"] if len(r["group"]) < 24 else r["group"][:20] + "…",
                "phases (watched)": r.get("phases") or " > ".join(env.recorder.phases(r["group"])),
                "pods bound": r.get("bound") or f"{len(names)}/{len(names)}",
                "Scheduled by": ",".join(sorted(reported)),
                "binding user": ",".join(sorted(users)).rsplit(":", 1)[-1],
                "create > all bound": f"{times[-1] - r['created']:.1f} s",
                "bind spread": f"{times[-1] - times[0]:.2f} s",
            }
        )
    print("\n" + besidevolcano.table(table))
    # Every bind in the namespace was Volcano's; our ServiceAccounts made none and were refused nothing.
    assert set().union(*by_audit.values()) == {volcano.SCHEDULER_USER}
    ours = f"system:serviceaccount:{helmbed.NS}:"
    denied = [line for line in helminstall.forbidden(helminstall.audit_events(bed.lc)) if line.startswith(ours)]
    assert denied == [], denied
