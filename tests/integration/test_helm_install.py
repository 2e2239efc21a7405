"""The Helm chart installed for real: ``helm install``, the examples, ``helm upgrade``, ``helm uninstall``.

On a test bed of its own (``helminstall.BareCluster``: no CRDs, no Queues, an audit log of our
ServiceAccounts' requests), with two runtime nodes (tainted for the chart's pods, each with a
network namespace: the chart's pods run there as real ``vbridge`` processes), three plain
simulated nodes for the workloads, and the built kube-scheduler for the chart's own pods:

1. ``helm install`` into a namespace labelled Pod Security ``restricted``; every Deployment
   Available, every pod Ready; the controllers' leader made the serving certificate and put its
   CA into the MutatingWebhookConfiguration;
2. the examples through that install: a Volcano Job (the MPI seed) defaulted by the webhook (the
   apiserver reaches it through the chart's Service), its PodGroup, its gang bound by the chart's
   scheduler to the plain nodes, run to Completed; a TFJob stamped and grouped, its pods (made
   here as the training-operator would) gang-bound;
3. ``helm upgrade`` with changed values: the webhook scaled to 3, the scheduler rolled with a new
   period; every custom resource still there (same uids); the webhook still admits;
4. ``helm uninstall``: its pre-delete hook (``vbridge stop``, the chart's Job, run on a runtime
   node) deletes the webhook configuration and the Deployments and waits for their pods to go
   before helm deletes their RBAC; what is left is listed and checked;
5. the code paths the examples do not take (``rarepaths``): a hand-made PodGroup corrected, a
   driver with an unusable conf held, a gang no node holds marked Unschedulable, an ``AbortJob``
   Command, ``CloseQueue``/``OpenQueue``, a Job deleted after its TTL, a preemption; meanwhile the serving
   certificate (``controllers.extraArgs``: valid 120 s) is renewed under that load, the CA kept,
   and every admission passed;
6. least privilege: the apiserver answered no 403 to our ServiceAccounts during the whole run,
   uninstall included (audit log), their processes logged no Forbidden, and ``kubectl auth can-i`` shows each
   component lacks the others' rights;
7. and the chart grants nothing more: every verb of every rule bound to our ServiceAccounts was
   used by a request of the run (audit log), except the ones in ``NOT_EXERCISED``, each with the
   code path that needs it and that this run does not take.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from tests.builders import spark
from tests.support import apiserver, helmbed, helminstall, helmstandalone, privileges, rarepaths
from vbridge.localcluster import binaries

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bed(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[helmbed.Bed]:
    with helmstandalone.running(bins, tmp_path_factory.mktemp("helm-bed")) as out:
        yield out


# -- the steps -------------------------------------------------------------------------------


@pytest.mark.timeout(300)
def test_install_runs_every_pod_ready_under_restricted_pod_security(bed: helmbed.Bed) -> None:
    core = k8s.CoreV1Api(bed.api)
    labels = {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
    }
    core.create_namespace({"metadata": {"name": helmbed.NS, "labels": labels}})
    started = time.monotonic()
    out = bed.helm(
        "install", helmbed.RELEASE, str(helmbed.CHART), "-n", helmbed.NS, "--create-namespace", "-f", str(bed.values)
    )
    helm_took = time.monotonic() - started
    replicas = {"webhook": 2, "controllers": 2, "scheduler": 2}
    pods = helmbed.eventually_diagnosed(
        bed, lambda: helmbed.all_ready(bed, replicas), 90, "every Deployment Available, every pod Ready"
    )
    took = time.monotonic() - started
    bed.notes["install"] = (helm_took, took)
    print(f"\nhelm install returned after {helm_took:.1f} s; every pod Ready {took:.1f} s after it started")
    print(out.splitlines()[0] if out else "")

    runtime_ips = {ip for n in helmbed.RUNTIME_NODES for ip in bed.sim.runtime.config.nodes[n].pod_ips}  # type: ignore[union-attr]
    for p in pods:
        assert p.spec.node_name in helmbed.RUNTIME_NODES and p.status.pod_ip in runtime_ips, p.metadata.name
        assert p.spec.scheduler_name == "default-scheduler"
        assert all(s.ready and s.restart_count == 0 for s in p.status.container_statuses), p.status.container_statuses
        assert (
            p.spec.security_context.run_as_non_root and p.spec.security_context.seccomp_profile.type == "RuntimeDefault"
        )
    # each component's two pods on two nodes
    for component in helmbed.COMPONENTS:
        placed = [p.spec.node_name for p in pods if f"-{component}-" in p.metadata.name]
        assert len(set(placed)) == len(placed) == 2, (component, placed)

    # The controllers' leader made the serving certificate and injected its CA.
    secret = core.read_namespaced_secret(f"{helmbed.RELEASE}-webhook-tls", helmbed.NS)
    bed.notes["first_cert"] = secret.data["tls.crt"]
    assert secret.type == "kubernetes.io/tls" and {"tls.crt", "tls.key", "ca.crt"} <= set(secret.data)
    config = k8s.AdmissionregistrationV1Api(bed.api).read_mutating_webhook_configuration(helmbed.RELEASE)
    assert config.webhooks and all(w.client_config.ca_bundle == secret.data["ca.crt"] for w in config.webhooks)
    assert all(w.client_config.service.name == f"{helmbed.RELEASE}-webhook" for w in config.webhooks)
    # The webhook Service has both webhook pods as ready endpoints (how the apiserver reaches them).
    webhook_ips = sorted(p.status.pod_ip for p in pods if "-webhook-" in p.metadata.name)
    slices = (
        k8s.DiscoveryV1Api(bed.api)
        .list_namespaced_endpoint_slice(
            helmbed.NS, label_selector=f"kubernetes.io/service-name={helmbed.RELEASE}-webhook"
        )
        .items
    )
    ready = sorted(a for s in slices for ep in s.endpoints or [] if ep.conditions.ready for a in ep.addresses)
    assert ready == webhook_ips

    # The default Queues: made by the scheduler (their one owner), not by a chart hook.
    def default_queues() -> dict[str, Any] | None:
        queues = {q["metadata"]["name"]: q for q in helmbed.custom(bed, helmbed.QUEUES, "queues")}
        return queues if {"default", "root"} <= queues.keys() else None

    queues = apiserver.eventually(default_queues, 30, "the default Queues")
    for name in ("default", "root"):
        queue = queues[name]
        assert "helm.sh/resource-policy" not in (queue["metadata"].get("annotations") or {})


@pytest.mark.timeout(240)
def test_examples_are_admitted_grouped_and_gang_scheduled_by_the_installed_chart(bed: helmbed.Bed) -> None:
    core = k8s.CoreV1Api(bed.api)
    core.create_namespace({"metadata": {"name": helmbed.WORK}})
    custom = k8s.CustomObjectsApi(bed.api)

    # A Volcano Job: the webhook (through the chart's Service) defaults it.
    job = helmbed.submit_mpi(bed)
    assert job["spec"]["queue"] == "default" and job["spec"]["maxRetry"] == 3
    group_name = f"lm-mpi-job-{job['metadata']['uid']}"
    group = apiserver.eventually(lambda: helmbed.podgroup(bed, group_name), 30, "the Volcano Job's PodGroup")
    assert group["spec"]["minMember"] == 3
    pods = apiserver.eventually(
        lambda: helmbed.bound(bed, "volcano.sh/job-name=lm-mpi-job", 3), 60, "the MPI gang to run"
    )
    assert all(p.spec.node_name in helmbed.PLAIN_NODES and p.spec.scheduler_name == "volcano" for p in pods)
    leader = apiserver.eventually(lambda: helmbed.scheduler_leader(bed), 10, "the scheduler's Lease holder")
    print(f"\nthe MPI gang bound to {sorted(p.spec.node_name for p in pods)}; scheduler leader: {leader}")
    apiserver.eventually(lambda: helmbed.phase(bed, "lm-mpi-job") == "Completed", 60, "the Volcano Job Completed")

    # A TFJob: the webhook stamps its templates, the controllers make its PodGroup; its pods (made
    # here from the stamped templates, as the training-operator does) are bound as one gang.
    tf: dict[str, Any] = yaml.safe_load((helmbed.ROOT / "examples" / "tfjob-v1.yaml").read_text())
    tf = custom.create_namespaced_custom_object(*helmbed.KF, helmbed.WORK, "tfjobs", tf)
    for role, spec in tf["spec"]["tfReplicaSpecs"].items():
        assert spec["template"]["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "example-job", role
        assert spec["template"]["spec"]["schedulerName"] == "volcano"
    group = apiserver.eventually(lambda: helmbed.podgroup(bed, "example-job"), 30, "the TFJob's PodGroup")
    assert group["spec"]["minMember"] == 4
    for pod in helmbed.tfjob_pods(tf):
        core.create_namespaced_pod(helmbed.WORK, pod)
    tf_pods = apiserver.eventually(
        lambda: helmbed.bound(bed, "training.kubeflow.org/job-name=example-job", 4), 60, "the TFJob's gang to run"
    )
    assert all(p.spec.node_name in helmbed.PLAIN_NODES for p in tf_pods)

    # A spark-submit driver (its pod and conf ConfigMap as spark-submit makes them): gated by the
    # webhook; the controllers read its conf, make its PodGroup and lift the gate; then it is bound.
    drv = spark.submit_pod("driver")
    drv["metadata"]["namespace"] = helmbed.WORK
    conf = drv["spec"]["volumes"][0]["configMap"]["name"]
    properties = "spark.executor.instances=2\nspark.executor.cores=1\nspark.executor.memory=512m\n"
    core.create_namespaced_config_map(
        helmbed.WORK, {"metadata": {"name": conf}, "data": {"spark.properties": properties}}
    )
    created = core.create_namespaced_pod(helmbed.WORK, drv)
    assert [g.name for g in created.spec.scheduling_gates or []] == ["vbridge.io/podgroup"]
    [bound_driver] = apiserver.eventually(
        lambda: helmbed.bound(bed, "spark-role=driver", 1), 60, "the spark-submit driver bound"
    )
    assert not bound_driver.spec.scheduling_gates
    group = helmbed.podgroup(bed, bound_driver.metadata.annotations["scheduling.k8s.io/group-name"])
    assert group is not None and group["spec"]["minMember"] == 1  # the driver; then its executors join
    assert group["spec"]["minResources"]["cpu"] == "3"  # the driver's 1 and its executors' 2, reserved

    # A Queue of a user's, to be kept across upgrade and uninstall.
    custom.create_cluster_custom_object(
        *helmbed.QUEUES,
        "queues",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "team-a"},
            "spec": {"weight": 2},
        },
    )


@pytest.mark.timeout(300)
def test_upgrade_with_changed_values_rolls_and_keeps_every_custom_resource(bed: helmbed.Bed) -> None:
    before = helmbed.custom_resources(bed)
    assert {"Queue//default", "Queue//team-a", "Job/work/lm-mpi-job", "TFJob/work/example-job"} <= set(before)
    assert "PodGroup/work/example-job" in before
    old_scheduler = {p.metadata.name for p in helmbed.chart_pods(bed) if "-scheduler-" in p.metadata.name}
    started = time.monotonic()
    bed.helm(
        "upgrade", helmbed.RELEASE, str(helmbed.CHART), "-n", helmbed.NS, "-f", str(bed.values),
        "--set", "webhook.replicas=3", "--set-json", "scheduler.period=0.5",
    )  # fmt: skip
    replicas = {"webhook": 3, "controllers": 2, "scheduler": 2}
    pods = helmbed.eventually_diagnosed(
        bed, lambda: helmbed.all_ready(bed, replicas), 180, "the upgrade rolled out, every pod Ready"
    )
    took = time.monotonic() - started
    bed.notes["upgrade"] = took
    print(f"\nhelm upgrade to every pod Ready: {took:.1f} s")
    for p in pods:
        assert all(c.restart_count == 0 for c in p.status.container_statuses), (p.metadata.name, helmbed.diagnose(bed))
    scheduler = [p for p in pods if "-scheduler-" in p.metadata.name]
    assert not ({p.metadata.name for p in scheduler} & old_scheduler), "the scheduler pods rolled"
    assert all("--period=0.5" in p.spec.containers[0].args for p in scheduler)
    assert helmbed.custom_resources(bed) == before  # same objects, same uids
    # The webhook still admits (three endpoints now) and the new scheduler leader still binds.
    small = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "after-upgrade"},
        "spec": {
            "minAvailable": 2,
            "tasks": [
                {
                    "name": "work",
                    "replicas": 2,
                    "template": {
                        "metadata": {"annotations": {"sim.vbridge.io/run-seconds": "2"}},
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
                    },
                }
            ],
        },
    }
    job = apiserver.eventually(
        lambda: k8s.CustomObjectsApi(bed.api).create_namespaced_custom_object(*helmbed.VC, helmbed.WORK, "jobs", small),
        30,
        "the webhook to admit after the upgrade",
    )
    assert job["spec"]["queue"] == "default" and job["spec"]["schedulerName"] == "volcano"
    apiserver.eventually(lambda: helmbed.phase(bed, "after-upgrade") == "Completed", 60, "the new Job Completed")


@pytest.mark.timeout(300)
def test_the_paths_the_examples_do_not_take_run_with_the_granted_rights(bed: helmbed.Bed) -> None:
    """Each step drives one code path a granted verb is for (``rarepaths``); the audit log then
    shows the verb used (the last test)."""
    assert rarepaths.corrected_podgroup(bed)["spec"]["minMember"] == 4
    assert rarepaths.unusable_spark_conf(bed)["reason"] == "PodGroupNotCreated"
    waiting = rarepaths.unschedulable_gang(bed)
    assert len(waiting) == 2, waiting
    assert rarepaths.job_command(bed, "too-big") in ("Aborting", "Aborted")
    assert rarepaths.queue_commands(bed, "team-a") == ["Closed", "Open"]
    assert rarepaths.ttl_job(bed)
    assert len(rarepaths.preemption(bed)) == 1  # one 2-cpu pod made room for the 2-cpu preemptor


@pytest.mark.timeout(200)
def test_the_serving_certificate_is_renewed_under_load_and_every_admission_passes(bed: helmbed.Bed) -> None:
    """Renewed every 80 s here (``helmstandalone.CERT_SECONDS``) while the tests above admitted
    jobs and pods (each would have failed on a refused admission): renewed, same CA, still admits."""
    core = k8s.CoreV1Api(bed.api)
    name = f"{helmbed.RELEASE}-webhook-tls"

    def renewed() -> k8s.V1Secret | None:
        found = core.read_namespaced_secret(name, helmbed.NS)
        return found if found.data["tls.crt"] != bed.notes["first_cert"] else None

    secret = apiserver.eventually(renewed, helmstandalone.CERT_SECONDS + 30, "the serving certificate renewed")
    config = k8s.AdmissionregistrationV1Api(bed.api).read_mutating_webhook_configuration(helmbed.RELEASE)
    assert all(w.client_config.ca_bundle == secret.data["ca.crt"] for w in config.webhooks)
    assert rarepaths.ttl_job(bed, "after-renewal")  # admitted by the webhook serving the renewed certificate


@pytest.mark.timeout(60)
def test_each_component_lacks_the_others_rights(bed: helmbed.Bed) -> None:
    def can(component: str, *what: str) -> bool:
        out = helmbed.kubectl_out(
            bed, "auth", "can-i", *what, f"--as=system:serviceaccount:{helmbed.NS}:{helmbed.RELEASE}-{component}"
        )
        return out == "yes"

    matrix = privileges.can_i(helmbed.NS, helmbed.WORK)
    got = {k: can(k[0], *k[1:]) for k in matrix}
    print("can-i: " + "; ".join(f"{' '.join(k)}: {'yes' if v else 'no'}" for k, v in got.items()))
    assert got == matrix


@pytest.mark.timeout(240)
def test_uninstall_leaves_only_the_kept_crds_and_queues(bed: helmbed.Bed) -> None:
    bed.notes["logs_before_uninstall"] = bed.keeper.logs()  # what shutting down after it logs is not pinned
    bed.notes["manifest"] = bed.helm("get", "manifest", helmbed.RELEASE, "-n", helmbed.NS)
    bed.notes["hooks"] = bed.helm("get", "hooks", helmbed.RELEASE, "-n", helmbed.NS)
    started = time.monotonic()
    bed.helm("uninstall", helmbed.RELEASE, "-n", helmbed.NS, "--wait")
    apiserver.eventually(lambda: not helmbed.chart_pods(bed), 60, "the chart's pods gone")
    print(f"\nhelm uninstall to no pods: {time.monotonic() - started:.1f} s")
    # The pre-delete hook ran first: it deleted the webhook configuration and the Deployments and
    # read them back until gone (404), all before helm deleted the rights of their pods.
    hook = f"system:serviceaccount:{helmbed.NS}:{helmbed.RELEASE}-{helmbed.HOOK}"
    done = {
        (e["verb"], e["objectRef"]["resource"], e["objectRef"]["name"], e["responseStatus"]["code"])
        for e in helminstall.audit_events(bed.lc)
        if e["user"]["username"] == hook
    }
    deployments = {f"{helmbed.RELEASE}-{c}" for c in helmbed.COMPONENTS}
    assert {(v, n) for v, r, n, code in done if r == "deployments" and code in (200, 202)} >= {
        ("delete", n) for n in deployments
    }, done
    assert {n for v, r, n, code in done if (v, r, code) == ("get", "deployments", 404)} == deployments, done
    assert ("delete", "mutatingwebhookconfigurations", helmbed.RELEASE, 200) in done, done
    left = helmbed.leftovers(bed)
    print(f"left in {helmbed.NS}: {left['namespace']}")
    print(f"left cluster-wide with the release's label: {left['cluster']}")
    crds = {c.metadata.name for c in k8s.ApiextensionsV1Api(bed.api).list_custom_resource_definition().items}
    assert crds >= helmbed.KEPT_CRDS
    queues = {q["metadata"]["name"] for q in helmbed.custom(bed, helmbed.QUEUES, "queues")}
    assert {"default", "team-a"} <= queues
    config = k8s.AdmissionregistrationV1Api(bed.api).list_mutating_webhook_configuration().items
    assert not config, [c.metadata.name for c in config]
    # Nothing cluster-wide with the release's labels; the CRDs stay, by their keep policy.
    assert left["cluster"] == []
    for name in helmbed.KEPT_CRDS:
        crd = k8s.ApiextensionsV1Api(bed.api).read_custom_resource_definition(name)
        assert crd.metadata.annotations["helm.sh/resource-policy"] == "keep"
    bed.notes["leftovers"] = left
    # In the namespace, nothing at all: what our components made at run time (the two Leases,
    # the controllers' certificate Secret) is owned by their ServiceAccounts, so the garbage
    # collector removes it once helm deleted those, even one a stopping replica recreated.
    apiserver.eventually(lambda: helmbed.leftovers(bed)["namespace"] == [], 60, "run-time objects collected")
    helm_made = bed.kubectl("get", "all,secrets,configmaps,serviceaccounts,roles,rolebindings", "-n", helmbed.NS,
                            "-l", "app.kubernetes.io/managed-by=Helm", "-o", "name")  # fmt: skip
    assert helm_made.split() == []


@pytest.mark.timeout(60)
def test_the_apiserver_answered_no_403_to_our_service_accounts(bed: helmbed.Bed) -> None:
    events = helminstall.audit_events(bed.lc)
    by_user: dict[str, int] = {}
    for e in events:
        by_user[e["user"]["username"]] = by_user.get(e["user"]["username"], 0) + 1
    print(f"\naudited requests per ServiceAccount: {by_user}")
    for component in helmbed.COMPONENTS:
        assert by_user.get(f"system:serviceaccount:{helmbed.NS}:{helmbed.RELEASE}-{component}", 0) > 0, component
    # Not one 403 in the whole run, `helm uninstall` included: its pre-delete hook stopped every
    # pod before helm deleted the RoleBindings (a standby polling its Lease, a leader handing it
    # back, both ran with their rights still there).
    denied = helminstall.forbidden(events)
    print(f"403s: {denied}")
    assert denied == [], denied
    logs = bed.notes["logs_before_uninstall"]  # until uninstall, as the audit log above
    assert len(logs) >= 6 + 1 + 2  # every container kept: the first six, the third webhook, the rolled schedulers
    flagged = {
        name: [ln for ln in text.splitlines() if "403" in ln or "Forbidden" in ln] for name, text in logs.items()
    }
    flagged = {k: v for k, v in flagged.items() if v}
    print(f"log files kept: {len(logs)}; with 403/Forbidden: {len(flagged)}")
    assert flagged == {}, flagged


@pytest.mark.timeout(60)
def test_every_granted_verb_was_used_or_has_a_named_code_path(bed: helmbed.Bed) -> None:
    events = helminstall.audit_events(bed.lc)  # the whole run: the uninstall hook's requests too
    release = bed.notes["manifest"] + "\n---\n" + bed.notes["hooks"]
    rows = privileges.table(release, events, namespace=helmbed.NS, prefix=f"{helmbed.RELEASE}-")
    print("\ngranted verb (component, group, resource, verb): requests in the run")
    for key, n in sorted(rows.items()):
        print(f"  {key}: {n}{'  (' + privileges.NOT_EXERCISED[key] + ')' if key in privileges.NOT_EXERCISED else ''}")
    assert {k[0] for k in rows} == {*helmbed.COMPONENTS, helmbed.HOOK}
    unused = {k for k, n in rows.items() if n == 0}
    assert unused - privileges.NOT_EXERCISED.keys() == set(), "granted, never used, no code path named"
    assert privileges.NOT_EXERCISED.keys() <= rows.keys(), "a named grant the chart no longer has"
