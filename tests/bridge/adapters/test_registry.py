"""The registry is the one list of kinds: a kind added to it alone shows in the webhook
configuration, the chart, ``vbridge list``, ``vbridge explain``, the scheduler's owner sentence
and the reconcilers; ``registry.kinds`` merges a kind's records (MPIJob's two versions)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from bridge.adapters import base, registry
from bridge.k8s import client, kubeconfigs
from scheduler.api import building
from scheduler.api import owners as creators
from scheduler.tools import workloads
from tests.builders import scheduler as b
from vbridge import chartgen, cli
from vbridge.commands import listing, output
from vbridge.controllers import jobs, wiring
from webhooks import configuration

API = client.Client(kubeconfigs.Connection(server="https://127.0.0.1:1", ca_file=None, cert_file=None, key_file=None))

WIDGETS = base.Workload(
    operator="widget-operator",
    creates="the widget-operator has not created them",
    aliases=("widget", "widgets", "wdg"),
    group_name="{name}-widgets",
    state=("status", "stage"),
)


class WidgetAdapter:
    """A made-up kind, served at two versions, with a generic reconciler: the registry record alone."""

    registration = base.Registration(
        name="example.com/widget",
        group="example.com",
        versions=("v1alpha1", "v1"),
        kind="Widget",
        plural="widgets",
        failure_policy="Fail",
        why="a made-up kind for the test",
        operations=("CREATE", "UPDATE"),
        generic_reconciler=True,
        workload=WIDGETS,
    )

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        return None

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        return None

    def finished(self, obj: dict[str, Any]) -> bool:
        return False

    def queue_of(self, obj: dict[str, Any], ctx: base.Context) -> str | None:
        return None


@pytest.fixture
def widget(monkeypatch: pytest.MonkeyPatch) -> WidgetAdapter:
    adapter = WidgetAdapter()
    monkeypatch.setattr(registry, "ADAPTERS", (*registry.ADAPTERS, adapter))
    return adapter


def test_a_made_up_kind_is_in_the_webhook_configuration(widget: WidgetAdapter) -> None:
    body = configuration.build(ca_bundle=b"", url="https://127.0.0.1:9443")
    [hook] = [h for h in body["webhooks"] if h["rules"][0]["apiGroups"] == ["example.com"]]
    assert hook["rules"][0]["apiVersions"] == ["v1alpha1", "v1"] and hook["rules"][0]["resources"] == ["widgets"]
    assert hook["clientConfig"]["url"].endswith(widget.registration.path) and hook["failurePolicy"] == "Fail"
    assert registry.by_path(widget.registration.path) is widget  # the webhook server's route


def test_a_made_up_kind_is_in_the_chart(widget: WidgetAdapter) -> None:
    files = chartgen.files()
    assert "/mutate/example-com-widget" in files["templates/mutatingwebhookconfiguration.yaml"]
    tpl = files["templates/_generated.tpl"]
    rules = yaml.safe_load(tpl.split('{{- define "vbridge.jobKindRules" -}}\n')[1].split("{{- end }}")[0])
    assert {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["list", "watch"]} in rules


def test_a_made_up_kind_is_listed_at_every_version(widget: WidgetAdapter) -> None:
    listed = [(k.kind, k.api_version, k.plural) for k in listing.operator_kinds() if k.kind == "Widget"]
    assert listed == [("Widget", "example.com/v1alpha1", "widgets"), ("Widget", "example.com/v1", "widgets")]
    made = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"}}
    started = {**made, "metadata": {"name": "s", "namespace": "ns"}, "status": {"stage": "Spinning"}}
    *_, operators = listing.tables([made, started])
    assert [listing.job_state(o) for o in operators.items] == ["Spinning", ""]
    args = cli.parser("list").parse_args(["list", "-n", "ns"])
    assert output.render([operators], args, "ns")[0].splitlines()[1:] == [
        "s      Widget   Spinning",
        "w      Widget   -",
    ]
    assert listing.hints([operators]) == [
        "note: 1 Widget(s) without status: their PodGroups wait for pods only the widget-operator creates; "
        "is it running? (`vbridge up --with-operators` runs it locally)"
    ]


def test_a_made_up_kind_is_explained_by_its_names(widget: WidgetAdapter) -> None:
    assert {a: k for a, k in workloads.kinds().items() if k == "Widget"} == {
        "widget": "Widget",
        "widgets": "Widget",
        "wdg": "Widget",
    }
    groups = [b.podgroup("owned", owner=("Widget", "a")), b.podgroup("b-widgets")]
    snap = building.build(nodes=[b.node("n1")], pods=[], podgroups=groups, queues=[b.queue()])
    assert workloads.resolve(snap, "wdg", "ns", "a") == "ns/owned"
    assert workloads.resolve(snap, "Widgets", "ns", "b") == "ns/b-widgets"  # its controller's name for the group
    assert workloads.resolve(snap, "pg", "ns", "b") == "ns/b-widgets"
    assert creators.creator(("Widget", "a")) == "the widget-operator has not created them"


def test_a_made_up_kind_gets_a_generic_reconciler(widget: WidgetAdapter) -> None:
    built = wiring.reconcilers(API, facts=None, scheduler_name="volcano", templates_by_name={})
    assert [r.adapter for r in built if isinstance(r, jobs.JobReconciler)][-1] is widget


def test_a_kinds_records_are_merged_with_every_version() -> None:
    [mpi] = [k for k in registry.kinds() if k.kind == "MPIJob"]
    assert mpi.api_versions == ("kubeflow.org/v1", "kubeflow.org/v2beta1") and mpi.plural == "mpijobs"
    assert [k.kind for k in registry.kinds()] == [
        *("SparkApplication", "SparkConnect", "TFJob", "PyTorchJob", "MPIJob"),
        *("XGBoostJob", "PaddleJob", "JAXJob", "Job", "JobSet"),
    ]
    assert not any(k.kind in ("Pod", "PodGroup", "Queue", "Command") for k in registry.kinds())


def test_records_of_one_kind_that_disagree_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    class Renamed(WidgetAdapter):  # the same kind at v2, under another plural
        registration = dataclasses.replace(
            WidgetAdapter.registration, name="example.com/widget-v2", versions=("v2",), plural="wdgs"
        )

    monkeypatch.setattr(registry, "ADAPTERS", (WidgetAdapter(), Renamed()))
    with pytest.raises(ValueError, match="disagree on its plural or workload"):
        registry.kinds()


def test_one_name_for_two_kinds_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    class Gadget(WidgetAdapter):
        registration = dataclasses.replace(
            WidgetAdapter.registration, name="example.com/gadget", kind="Gadget", plural="gadgets"
        )

    monkeypatch.setattr(registry, "ADAPTERS", (WidgetAdapter(), Gadget()))
    with pytest.raises(ValueError, match="'widget' names both Widget and Gadget"):
        registry.kinds()
