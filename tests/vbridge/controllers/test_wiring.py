"""The reconcilers are built from the registry: one generic job reconciler per registered job kind."""

from __future__ import annotations

from bridge.adapters import registry
from bridge.k8s import client, kubeconfigs
from vbridge.controllers import commands as command_controller
from vbridge.controllers import jobs, wiring
from vbridge.controllers import spark as spark_controller
from vbridge.controllers import vcjobs as vcjob_controller

API = client.Client(kubeconfigs.Connection(server="https://127.0.0.1:1", ca_file=None, cert_file=None, key_file=None))


def test_generic_reconcilers_for_registered_job_kinds_and_the_own_controllers() -> None:
    built = wiring.reconcilers(API, facts=None, scheduler_name="volcano", templates_by_name={})
    generic = [r.adapter for r in built if isinstance(r, jobs.JobReconciler)]
    assert generic == [a for a in registry.ADAPTERS if a.registration.generic_reconciler]  # in registry order
    # every job kind an operator runs (each version's record) is among them
    operated = {(k.kind, v) for k in registry.kinds() if k.workload.operator_table for v in k.versions}
    assert operated == {(a.registration.kind, v) for a in generic for v in a.registration.versions}
    assert {("MPIJob", "v1"), ("MPIJob", "v2beta1"), ("TFJob", "v1"), ("SparkApplication", "v1beta2")} <= operated
    assert [type(r) for r in built if not isinstance(r, jobs.JobReconciler)] == [
        spark_controller.SparkReconciler,
        vcjob_controller.VcJobController,
        command_controller.CommandController,
    ]
    beside_volcano = wiring.reconcilers(API, None, scheduler_name="volcano", templates_by_name={}, vcjobs=False)
    assert not any(
        isinstance(r, vcjob_controller.VcJobController | command_controller.CommandController) for r in beside_volcano
    )


def test_volcano_jobs_pods_and_the_scheduling_kinds_have_no_generic_reconciler() -> None:
    assert {a.registration.name for a in registry.ADAPTERS if not a.registration.generic_reconciler} == {
        "batch.volcano.sh/job",
        "spark.apache.org/pod",
        "kubeflow.org/pod",
        "jobset.x-k8s.io/pod",
        "scheduling.volcano.sh/podgroup",  # judged at admission, held by the scheduler: nothing to reconcile
        "scheduling.volcano.sh/queue",
        "bus.volcano.sh/command",  # carried out by commands.CommandController, not a generic reconciler
    }


def test_an_adapter_list_of_no_job_kinds_builds_only_the_own_controllers() -> None:
    pods_only = [a for a in registry.ADAPTERS if a.registration.kind == "Pod"]
    built = wiring.reconcilers(API, None, scheduler_name="volcano", templates_by_name={}, adapters=pods_only)
    assert len(built) == 3 and not any(isinstance(r, jobs.JobReconciler) for r in built)
