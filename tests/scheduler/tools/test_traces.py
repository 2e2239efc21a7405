"""The trace schema refuses unknown keys and wrong types, naming the field."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from scheduler.tools import traces

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _tiny() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "traces" / "tiny.yaml").read_text())
    return doc


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples" / "traces").glob("*.yaml")))
def test_the_shipped_traces_are_valid(name: str) -> None:
    traces.check(yaml.safe_load((ROOT / "examples" / "traces" / name).read_text()))


@pytest.mark.parametrize(
    ("edit", "path", "message"),
    [
        (
            lambda d: d["jobs"][1].update(arival=d["jobs"][1].pop("arrival")),
            ("jobs", 1, "arival"),
            "did you mean 'arrival'?",
        ),
        (lambda d: d.update(perod=1), ("perod",), "unknown key; did you mean 'period'?"),
        (lambda d: d["nodes"][0].update(gpus=2), ("nodes", 0, "gpus"), "did you mean 'gpu'?"),
        (lambda d: d["jobs"][0]["tasks"][0].update(request={}), ("jobs", 0, "tasks", 0, "request"), "did you mean"),
        (lambda d: d["jobs"][0].update(duration="ten"), ("jobs", 0, "duration"), "expected a number of seconds"),
        (lambda d: d["jobs"][0].update(arrival=-1), ("jobs", 0, "arrival"), "must be at least 0"),
        (lambda d: d.update(period=0), ("period",), "must be more than 0"),
        (lambda d: d["jobs"][0]["tasks"][0].update(replicas=0), ("jobs", 0, "tasks", 0, "replicas"), "at least 1"),
        (
            lambda d: d["jobs"][0]["tasks"][0]["requests"].update(cpu="lots"),
            ("jobs", 0, "tasks", 0, "requests", "cpu"),
            "quantity",
        ),
        (lambda d: d["jobs"][2].update(name="a"), ("jobs", 2, "name"), "'a' is used twice"),
        (lambda d: d["jobs"][0].update(queue="gone"), ("jobs", 0, "queue"), "queue 'gone' is not declared"),
        (lambda d: d["jobs"][0].pop("duration"), ("jobs", 0), "'duration' is required"),
        (lambda d: d["queues"][0].update(weight=0), ("queues", 0, "weight"), "at least 1, got 0"),
        (lambda d: d["queues"][0].update(weight=65536), ("queues", 0, "weight"), "at most 65535, got 65536"),
    ],
)
def test_a_bad_field_is_named(edit: Any, path: tuple[object, ...], message: str) -> None:
    doc = _tiny()
    edit(doc)
    with pytest.raises(traces.TraceError) as raised:
        traces.check(doc)
    assert raised.value.path == path and message in raised.value.detail
    assert str(raised.value).startswith(f"invalid trace: {traces.where(path)}: ")


def test_where_reads_as_the_file_does() -> None:
    assert traces.where(("jobs", 2, "tasks", 0, "requests")) == "jobs[2].tasks[0].requests"
    assert traces.where(("period",)) == "period"


def test_not_a_mapping() -> None:
    with pytest.raises(traces.TraceError, match="invalid trace: expected a mapping of period, until"):
        traces.check(["a", "list"])
