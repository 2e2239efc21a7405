"""Volcano's admission defaults and validation, on the seed manifests and on broken variants."""

from __future__ import annotations

import copy
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st

from bridge import errors
from bridge.adapters.vcjob import spec
from tests.builders import vcjob as jobs


def test_defaults_fill_only_what_is_missing_and_are_idempotent() -> None:
    raw: dict[str, Any] = {
        "metadata": {"name": "j"},
        "spec": {"tasks": [{"replicas": 2, "template": {}}, {"name": "w", "replicas": 3, "minAvailable": 1}]},
    }
    out = spec.defaulted(raw, scheduler_name="my-volcano")
    assert out["spec"]["queue"] == "default" and out["spec"]["schedulerName"] == "my-volcano"
    assert out["spec"]["maxRetry"] == 3
    assert [(t["name"], t["minAvailable"]) for t in out["spec"]["tasks"]] == [("default0", 2), ("w", 1)]
    assert out["spec"]["minAvailable"] == 3  # Σ task minAvailable, not Σ replicas
    assert spec.defaulted(out) == out
    assert "queue" not in raw["spec"], "the input is not modified"


def test_user_values_are_kept() -> None:
    job = jobs.mpi()
    job["spec"].update(maxRetry=0, minAvailable=1, queue="research")
    assert spec.defaulted(job)["spec"] | {} == job["spec"]


def test_the_seeds_are_valid_and_svc_ssh_env_need_no_warning() -> None:
    assert spec.validate(jobs.mpi()) == []
    assert spec.validate(jobs.tf()) == []


def _broken(change: str) -> dict[str, Any]:
    job = jobs.mpi()
    s = job["spec"]
    if change == "dup":
        s["tasks"][1]["name"] = "mpimaster"
    elif change == "task-min":
        s["tasks"][1]["minAvailable"] = 3
    elif change == "job-min":
        s["minAvailable"] = 9
    elif change == "event":
        s["tasks"][0]["policies"] = [{"event": "PodExploded", "action": "RestartJob"}]
    elif change == "action":
        s["tasks"][0]["policies"] = [{"event": "PodFailed", "action": "Reboot"}]
    elif change == "both":
        s["policies"] = [{"event": "PodFailed", "exitCode": 3, "action": "RestartJob"}]
    elif change == "zero":
        s["policies"] = [{"exitCode": 0, "action": "RestartJob"}]
    elif change == "plugin":
        s["plugins"] = {"svc": [], "magic": []}
    elif change == "no-tasks":
        s["tasks"] = []
    elif change == "no-containers":
        s["tasks"][0]["template"] = {"spec": {}}
    elif change == "depends":
        s["tasks"][1]["dependsOn"] = {"name": ["nobody"]}
    elif change == "cycle":
        s["tasks"][0]["dependsOn"] = {"name": ["mpiworker"]}
        s["tasks"][1]["dependsOn"] = {"name": ["mpimaster"]}
    elif change == "self":
        s["tasks"][1]["dependsOn"] = {"name": ["mpiworker"]}
    elif change == "iteration":
        s["tasks"][0]["dependsOn"] = {"name": ["mpiworker"], "iteration": "some"}
    elif change == "plugin-flag":
        s["plugins"]["mpi"] = ["--master=mpimaster", "--workers=mpiworker"]
    elif change == "plugin-port":
        s["plugins"]["svc"] = ["--disable-network-policy=maybe"]
    elif change == "mounts":
        s["volumes"] = [{"mountPath": "/data"}, {"mountPath": "/data"}]
    return job


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("dup", "task name 'mpimaster' is used twice"),
        ("task-min", "task 'mpiworker': minAvailable 3 is greater than replicas 2"),
        ("job-min", "spec.minAvailable 9 is greater than the total replicas of all tasks (3)"),
        ("event", "policy event 'PodExploded' is unknown"),
        ("action", "policy action 'Reboot' is unknown"),
        ("both", "sets both an event and exitCode"),
        ("zero", "exitCode 0 is not an error code"),
        ("plugin", "unknown job plugin 'magic'"),
        ("no-tasks", "spec.tasks must list at least one task"),
        ("no-containers", "template.spec.containers must list a container"),
        ("depends", "depends on unknown task 'nobody'"),
        ("mounts", "no two may share one"),
        ("cycle", "task dependsOn forms a cycle (mpimaster → mpiworker → mpimaster)"),
        ("self", "task 'mpiworker' depends on itself"),
        ("iteration", "dependsOn.iteration 'some' is unknown; use one of all, any"),
        ("plugin-flag", "plugin 'mpi': unknown argument --workers; known: --master, --worker, --port"),
        ("plugin-port", "plugin 'svc': invalid value 'maybe' for --disable-network-policy: use true or false"),
    ],
)
def test_invalid_jobs_are_refused_with_what_to_change(change: str, message: str) -> None:
    with pytest.raises(errors.InvalidObjectError, match=message.replace("(", r"\(").replace(")", r"\)")):
        spec.validate(spec.defaulted(_broken(change)) if change != "no-tasks" else _broken(change))


def test_plugins_we_do_not_apply_are_accepted_with_a_warning() -> None:
    job = jobs.tf()
    job["spec"]["plugins"]["ray"] = []
    job["spec"]["plugins"]["tensorflow"] = ["--port=2222"]
    assert spec.validate(job) == ["plugins ray are accepted but not applied by volcano-bridge"]


def test_framework_plugins_bring_svc_and_mpi_brings_ssh_as_volcanos_webhook_adds_them() -> None:
    job = jobs.tf()
    job["spec"]["plugins"] = {"mpi": ["--port=22"]}
    assert spec.defaulted(job)["spec"]["plugins"] == {"mpi": ["--port=22"], "svc": [], "ssh": []}
    job["spec"]["plugins"] = {"pytorch": [], "svc": ["--disable-network-policy"]}
    assert spec.defaulted(job)["spec"]["plugins"] == {"pytorch": [], "svc": ["--disable-network-policy"]}
    job["spec"]["plugins"] = {"env": []}
    assert spec.defaulted(job)["spec"]["plugins"] == {"env": []}


def test_depends_on_is_read_with_its_iteration() -> None:
    job = jobs.mpi()
    job["spec"]["tasks"][0]["dependsOn"] = {"name": ["mpiworker"]}
    master, worker = spec.tasks(job)
    assert (master.depends_on, master.iteration) == (("mpiworker",), "all")
    assert (worker.depends_on, worker.iteration) == ((), "all")
    job["spec"]["tasks"][0]["dependsOn"] = {"name": ["mpiworker"], "iteration": "any"}
    assert spec.tasks(job)[0].iteration == "any"
    assert spec.validate(job) == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["spec", "containers", "event", "name", "x"]), inner)
    ),
    max_leaves=12,
)


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    tasks=st.lists(
        st.dictionaries(
            st.sampled_from(["name", "replicas", "minAvailable", "template", "policies", "dependsOn"]), json_values
        ),
        max_size=3,
    )
    | json_values,
    min_available=json_values,
)
def test_any_shape_is_defaulted_or_refused_never_crashes(tasks: Any, min_available: Any) -> None:
    job = {"metadata": {"name": "j"}, "spec": {"tasks": copy.deepcopy(tasks), "minAvailable": min_available}}
    try:
        spec.validate(spec.defaulted(job))
    except errors.InvalidObjectError as exc:
        assert str(exc)
