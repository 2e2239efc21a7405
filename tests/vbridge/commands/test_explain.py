"""``vbridge explain``: targets, namespaces, --all-pending, text and JSON, over built objects (no cluster)."""

from __future__ import annotations

import argparse
import datetime
import json
from collections.abc import Sequence
from typing import Any

import pytest
import yaml

from bridge import errors
from scheduler import configure
from tests.builders import scheduler as b
from vbridge import cli
from vbridge.commands import explain as explain_command

NOW = datetime.datetime(2025, 1, 1, 1, tzinfo=datetime.UTC)
NODES = [b.node(f"n{i}", cpu="16", memory="64Gi") for i in range(4)]


def objects() -> dict[str, list[dict[str, Any]]]:
    return {
        "nodes": NODES,
        "pods": [
            *(b.pod(f"toobig-w{i}", namespace="seed", group="toobig-9f8e", cpu="40") for i in range(2)),
            *(b.pod(f"wide-{i}", namespace="seed", group="wide", cpu="14") for i in range(5)),
            b.pod("run-0", namespace="seed", group="run", cpu="1", node="n0"),
        ],
        "podgroups": [
            b.podgroup("toobig-9f8e", namespace="seed", min_member=2, owner=("Job", "toobig")),
            b.podgroup("wide", namespace="seed", min_member=5, min_resources={"cpu": "70"}),
            b.podgroup("mnist", namespace="seed", min_member=4, owner=("TFJob", "mnist")),
            b.podgroup("run", namespace="seed", phase="Running"),
            b.podgroup("elsewhere", namespace="other", phase="Inqueue"),
        ],
        "queues": [b.queue()],
        "priorityclasses": [],
    }


def parse(*argv: str) -> argparse.Namespace:
    return cli.parser("explain").parse_args(["explain", *argv])


def out(*argv: str, namespace: str = "seed") -> str:
    args = parse(*argv)
    return explain_command.text(args, objects(), configure.default(), args.namespace or namespace, NOW)


@pytest.mark.parametrize(
    "argv",
    [
        ("vcjob/toobig",),
        ("vcjob", "toobig"),
        ("job.batch.volcano.sh/toobig",),
        ("pg/toobig",),  # issue 15: the group is toobig-<uid>
        ("podgroup", "seed/toobig-9f8e"),  # the old form
        ("seed/toobig-9f8e",),
        ("vcjob/toobig", "-n", "seed"),
    ],
)
def test_targets_resolve_to_the_group(argv: tuple[str, ...]) -> None:
    text = out(*argv, namespace="seed")
    assert text.startswith("PodGroup seed/toobig-9f8e (of Job toobig): phase Pending")
    assert "verdict: can never run here: task toobig-w0 needs cpu 40 but the largest node has 16" in text
    assert "must free up" not in text


def test_namespace_flag_wins_over_the_context() -> None:
    with pytest.raises(errors.BridgeError, match="podgroup other/toobig not found"):
        out("pg/toobig", "-n", "other")


def test_proportion_refusal_in_human_quantities() -> None:
    text = out("pg/wide")
    assert "not admitted: enqueue's proportion says no: minResources (cpu 70)" in text
    assert "70000m" not in text and "admissible" not in text


def test_pods_not_created_yet_name_their_creator() -> None:
    text = out("tfjob/mnist")
    assert "0 of 4 pods exist: the Kubeflow training-operator has not created them" in text
    assert "nowhere" not in text and "nodes (" not in text


def test_running_group_has_no_empty_sections() -> None:
    text = out("pg/run")
    assert "minMember is met" in text
    assert "nodes (" not in text and "best partial fit" not in text and "enqueue" not in text


def test_json_is_stable() -> None:
    doc = json.loads(out("vcjob/toobig", "-o", "json"))
    assert set(doc) == {
        "podgroup",
        "owner",
        "phase",
        "next_phase",
        "state",
        "verdict",
        "never",
        "condition",
        "pods",
        "shapes",
        "fit",
        "queue",
        "enqueue",
        "evictions",
    }
    assert doc["podgroup"] == "seed/toobig-9f8e" and doc["owner"] == {"kind": "Job", "name": "toobig"}
    assert doc["state"] == "never" and doc["next_phase"] == "Pending"
    assert doc["condition"]["reason"] == "NeverFits"
    assert doc["enqueue"]["refused_by"] == "never"
    assert doc["shapes"][0]["request"]["cpu"] == "40"
    assert json.loads(out("pg/wide", "--json"))["enqueue"]["refused_by"] == "proportion"


def test_all_pending_in_the_namespace_and_everywhere() -> None:
    text = out("--all-pending")
    assert [line.split(":")[0] for line in text.splitlines() if line.startswith("PodGroup ")] == [
        "PodGroup seed/mnist (of TFJob mnist)",
        "PodGroup seed/toobig-9f8e (of Job toobig)",
        "PodGroup seed/wide",
    ]
    everywhere = json.loads(out("--all-pending", "-A", "-o", "json"))
    assert [doc["podgroup"] for doc in everywhere] == ["other/elsewhere", "seed/mnist", "seed/toobig-9f8e", "seed/wide"]
    assert out("--all-pending", "-n", "empty") == "no Pending or Inqueue PodGroup in namespace empty"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("deployment/x",), "podgroup deployment/x not found; 'deployment/x' was read as NAMESPACE/NAME"),
        (("deployment", "x"), "unknown kind 'deployment'"),
        ((), "expected KIND/NAME"),
        (("tfjob/ghost",), "no PodGroup for tfjob seed/ghost not found"),
    ],
)
def test_errors(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(errors.BridgeError, match=message):
        out(*argv)


def test_json_errors_are_json_with_status_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(explain_command, "gather", lambda conn, backend: (objects(), None, "volcano"))
    monkeypatch.setattr(explain_command.connecting, "connection", lambda args: None)
    assert cli.main(["explain", "tfjob/ghost", "-n", "seed", "-o", "json"]) == 1
    assert json.loads(capsys.readouterr().out) == {"error": "no PodGroup for tfjob seed/ghost not found"}
    assert cli.main(["explain", "nope", "x", "-o", "json"]) == 1
    assert "unknown kind" in json.loads(capsys.readouterr().out)["error"]
    assert cli.main(["explain", "tfjob/mnist", "-n", "seed"]) == 0
    assert "0 of 4 pods exist" in capsys.readouterr().out
    assert cli.main(["explain", "tfjob/ghost", "-n", "seed"]) == 1  # text: the usual error line, a runtime error
    assert "no PodGroup for tfjob seed/ghost not found" in capsys.readouterr().err
    assert cli.main(["explain", "nope", "x"]) == 2  # a malformed target is a usage error
    assert capsys.readouterr().err.splitlines() == [
        f"vbridge: error: unknown kind 'nope'; one of {', '.join(sorted(explain_command.workloads.kinds()))}",
        "run 'vbridge explain --help' for usage",
    ]
    assert cli.main(["explain", "tfjob/mnist", "-n", "seed", "-o", "yaml"]) == 0
    as_yaml = yaml.safe_load(capsys.readouterr().out)
    assert cli.main(["explain", "tfjob/mnist", "-n", "seed", "-o", "json"]) == 0
    assert as_yaml == json.loads(capsys.readouterr().out)


REFUSAL = {"type": "NativeGroupSynced", "status": "False", "reason": "Refused", "message": "PodGroup seed/wide refused"}


def _native(
    *, pods: Sequence[dict[str, Any]] = (), conditions: Sequence[dict[str, Any]] = ()
) -> dict[str, list[dict[str, Any]]]:
    found = objects()
    found["pods"] = [*found["pods"], *pods]
    wide = next(pg for pg in found["podgroups"] if pg["metadata"]["name"] == "wide")
    wide.setdefault("status", {})["conditions"] = list(conditions)
    return found


@pytest.mark.parametrize(
    ("found", "native", "backend"),
    [
        (_native(), [], "volcano"),  # pods of our scheduler, no native object
        (_native(pods=[b.native_pod("w-0", group="wide", namespace="seed")]), [], "native"),  # joined to our group
        # a native group nobody of ours made (the Workload API used directly): not our stamp
        (_native(pods=[b.native_pod("own-0", group="theirs", namespace="seed")]), [], "volcano"),
        (_native(), [{"metadata": {"namespace": "seed", "name": "run"}}], "native"),  # a twin of ours
        (_native(), [{"metadata": {"namespace": "other", "name": "run"}}], "volcano"),  # same name, elsewhere
        (_native(conditions=[REFUSAL]), [], "native"),  # nothing native exists: the refusal says it
    ],
)
def test_the_backend_is_found_from_our_native_stamp(
    found: dict[str, list[dict[str, Any]]], native: list[dict[str, Any]], backend: str
) -> None:
    assert explain_command.detect(found, native) == backend


def test_a_refused_native_twin_is_the_verdict_not_kube_scheduler() -> None:
    found = _native(pods=[b.native_pod(f"w-{i}", group="wide", namespace="seed", cpu="14") for i in range(5)])
    found["pods"] = [p for p in found["pods"] if not p["metadata"]["name"].startswith("wide-")]
    found["podgroups"][1]["status"]["conditions"] = [REFUSAL]
    conditions = explain_command.native_conditions(found, [])
    assert conditions == {"seed/wide": REFUSAL}
    args = parse("pg/wide", "-o", "json")
    doc = json.loads(explain_command.text(args, found, configure.parse("", backend="native"), "seed", NOW, conditions))
    assert doc["side"] == "native-refused"
    assert doc["verdict"].startswith("kube-scheduler cannot place it: PodGroup seed/wide refused; our queue: ")
    assert doc["native_condition"] == {"status": "False", "reason": "Refused", "message": "PodGroup seed/wide refused"}
