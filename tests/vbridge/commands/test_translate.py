"""``vbridge translate``: one test per behaviour; long outputs are golden files.

The golden files under ``golden/translate/`` are the command's exact stdout, run from the
repository root. Regenerate after an intended change with
``VBRIDGE_UPDATE_GOLDEN=1 pytest tests/vbridge/commands/test_translate.py`` and review the diff.
"""

from __future__ import annotations

import io
import json
import pathlib
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.adapters import registry
from tests.support import golden
from vbridge import cli

ROOT = pathlib.Path(__file__).resolve().parents[3]
GOLDEN = pathlib.Path(__file__).parent / "golden" / "translate"
PODGROUP = "scheduling.volcano.sh/v1beta1"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # paths in the output as a user types them


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["translate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _golden(name: str, out: str) -> None:
    golden.check(GOLDEN, name, out)


def _kinds(out: str) -> list[tuple[str, str]]:
    return [(d["apiVersion"], d["kind"]) for d in yaml.safe_load_all(out) if d]


def test_a_spark_submit_script_becomes_its_driver_pod_and_podgroup(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "-f", "examples/spark-submit-volcano.sh")
    assert (code, err) == (0, "")
    _golden("spark-submit-volcano.yaml", out)
    pod, group = [d for d in yaml.safe_load_all(out) if d]
    assert pod["spec"]["schedulingGates"] == [{"name": "vbridge.io/podgroup"}]
    assert group["spec"]["minResources"] == {"cpu": "6", "memory": "8448Mi"}  # driver + 5 executors of 1408Mi


def test_a_volcano_job_shows_the_podgroup_it_will_get(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "examples/volcano-job-mpi.yaml")
    assert code == 0
    _golden("volcano-job-mpi.yaml", out)
    assert "placeholder uid 00000000-0000-0000-0000-000000000000" in out
    assert _kinds(out)[-1] == (PODGROUP, "PodGroup")


def test_a_hand_written_podgroup_is_used_as_is(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    group = {"apiVersion": PODGROUP, "kind": "PodGroup", "metadata": {"name": "pg"}, "spec": {"minMember": 3}}
    (tmp_path / "pg.yaml").write_text(yaml.safe_dump(group))
    code, out, _ = _run(capsys, "-f", str(tmp_path / "pg.yaml"))
    assert code == 0
    assert "# note: already a PodGroup: the scheduler uses it as is" in out
    assert [d for d in yaml.safe_load_all(out) if d] == [group]


def test_a_directory_is_read_in_sorted_order_and_converted_only_has_no_podgroup(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(capsys, "-f", "examples", "--converted-only")
    assert (code, err) == (0, "")
    _golden("examples-converted-only.yaml", out)
    kinds = _kinds(out)
    assert ("PodGroup" not in {k for _, k in kinds}) and ("kubeflow.org/v1", "MPIJob") in kinds
    assert ("kubeflow.org/v1alpha1", "TFJob") not in kinds  # converted to v1
    sources = [line.split(":", 1)[0] for line in out.splitlines() if line.startswith("# examples/")]
    assert sources == sorted(sources)


def test_converted_only_objects_are_unchanged_otherwise(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "examples/tfjob-v1.yaml", "--converted-only")
    assert code == 0
    assert [d for d in yaml.safe_load_all(out) if d] == [yaml.safe_load((ROOT / "examples/tfjob-v1.yaml").read_text())]


def test_stdin_is_read_with_dash(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "examples/tfjob-v1alpha1.yaml").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text)))
    code, out, _ = _run(capsys, "-f", "-")
    assert code == 0
    assert out.startswith("# --- <stdin>:1: kubeflow.org/v1alpha1 TFJob example-job\n")
    assert _kinds(out) == [("kubeflow.org/v1", "TFJob"), (PODGROUP, "PodGroup")]


def test_the_default_output_puts_the_podgroups_in_a_second_section(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "-f", "examples/tfjob-v1.yaml", "-f", "examples/pytorchjob-elastic.yaml")
    assert code == 0
    objects, groups = out.split("# === what the bridge creates")
    groups = groups.split("\n", 1)[1]
    assert [k for _, k in _kinds(objects)] == ["TFJob", "PyTorchJob"]
    assert [k for _, k in _kinds(groups)] == ["PodGroup", "PodGroup"]


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("bad.yaml", "apiVersion: v1\nkind: [Pod\n", "bad.yaml:3:1: error: while parsing a flow sequence: expected"),
        ("bad.json", '{"apiVersion": "v1",\n  "kind": }', "bad.json:2:11: error: Expecting value"),
        ("list.yaml", "---\n- a\n- b\n", "list.yaml:2:1: error: a list, not a Kubernetes object"),
        ("text.yaml", "# c\nhello\n", "text.yaml:2:1: error: text, not a Kubernetes object"),
        ("tab.yaml", "a: b\n\tc: d\n", "tab.yaml:2:1: error: while scanning for the next token: found character '\\t'"),
        ("ctl.yaml", "a: \x07\n", "ctl.yaml:1:4: error: unacceptable character '\\x07': special characters"),
    ],
)
def test_every_input_error_is_one_line_with_the_file_and_position(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path, name: str, text: str, line: str
) -> None:
    (tmp_path / name).write_text(text)
    code, _, err = _run(capsys, str(tmp_path / name))
    assert code == 1
    assert err.count("\n") == 1 and err.startswith(f"{tmp_path}/{line}"), err


def test_an_unreadable_file_and_not_utf8_are_one_line_each(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    (tmp_path / "latin1.yaml").write_bytes(b"kind: Pod\nname: caf\xe9\n")
    code, _, err = _run(capsys, "-f", str(tmp_path / "latin1.yaml"), "-f", str(tmp_path / "missing.yaml"))
    assert code == 1
    assert err.splitlines() == [
        f"{tmp_path}/latin1.yaml:2:10: error: not UTF-8 text (invalid continuation byte)",
        f"{tmp_path}/missing.yaml: error: cannot read: No such file or directory",
    ]


def test_one_bad_document_does_not_hide_the_others(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    good = (ROOT / "examples/tfjob-v1.yaml").read_text()
    (tmp_path / "m.yaml").write_text(f"just text\n---\n{good}---\nkind: Pod\n")
    code, out, err = _run(capsys, str(tmp_path / "m.yaml"))
    assert code == 1
    assert err.splitlines() == [
        f"{tmp_path}/m.yaml:1:1: error: text, not a Kubernetes object (a mapping with apiVersion and kind)",
        f"{tmp_path}/m.yaml:{good.count(chr(10)) + 4}: error: ? Pod ?: not a Kubernetes object: no apiVersion and kind",
    ]
    assert ("kubeflow.org/v1", "TFJob") in _kinds(out)


def test_a_denial_is_one_line_on_stderr_and_exit_1(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    job = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "x"}}
    job["spec"] = {"tfReplicaSpecs": {"Worker": {"replicas": -3}}}
    (tmp_path / "j.yaml").write_text(yaml.safe_dump(job))
    code, out, err = _run(capsys, str(tmp_path / "j.yaml"), "--converted-only")
    assert (code, out) == (1, "")
    assert err == (
        f"{tmp_path}/j.yaml:1: error: kubeflow.org/v1 TFJob x: "
        "tfReplicaSpecs.Worker.replicas must be a non-negative integer, got -3\n"
    )


def test_a_script_it_cannot_read_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.sh").write_text("#!/bin/sh\nspark-submit --conf 'spark.x=1 \\\n  app.jar\n")
    (tmp_path / "b.sh").write_text("#!/bin/sh\necho hello\n")
    (tmp_path / "c.sh").write_text("spark-submit --master k8s://h --deploy-mode cluster --bogus x app.jar\n")
    code, out, err = _run(capsys, "-f", str(tmp_path))
    assert code == 1 and "# ERROR: no spark-submit command line in it" in out
    assert err.splitlines() == [
        f"{tmp_path}/a.sh:2: error: spark-submit: cannot read this command line: No closing quotation",
        f"{tmp_path}/b.sh: error: shell script: no spark-submit command line in it",
        f"{tmp_path}/c.sh:1: error: spark-submit: spark-submit has no option --bogus",
    ]


def test_a_namespace_label_without_equals_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["translate", "examples/tfjob-v1.yaml", "--namespace-label", "foo"])
    assert done.value.code == 2
    assert "argument --namespace-label: expected KEY=VALUE (e.g. vbridge.io/gang-scheduling=enabled), got 'foo'" in (
        capsys.readouterr().err
    )


def test_no_input_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys) == (2, "", "vbridge translate: error: no input: give -f FILE|DIR|- (or FILE)\n")


def test_skipped_documents_are_silent_unless_asked(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    (tmp_path / "d.yaml").write_text(yaml.safe_dump(deployment))
    manifests = [str(tmp_path / "d.yaml"), "examples/sparkapplication-pi.yaml"]
    assert _run(capsys, *[a for m in manifests for a in ("-f", m)]) == (0, "", "")
    code, out, _ = _run(capsys, *[a for m in manifests for a in ("-f", m)], "--explain-skipped")
    assert code == 0
    assert out.splitlines() == [
        f"# skipped: {tmp_path}/d.yaml:1: apps/v1 Deployment web: a Deployment: not a kind volcano-bridge handles",
        "# skipped: examples/sparkapplication-pi.yaml:1: sparkoperator.k8s.io/v1beta2 SparkApplication spark-pi: "
        "a SparkApplication without batchScheduler volcano in a namespace not labelled "
        "vbridge.io/gang-scheduling=enabled (see --namespace-label)",
    ]
    code, out, _ = _run(capsys, "-f", str(tmp_path / "d.yaml"), "--converted-only")
    assert [d for d in yaml.safe_load_all(out) if d] == [deployment]  # still applied: it is the user's


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "examples/tfjob-v1alpha1.yaml", "-o", "json")
    assert code == 0
    (record,) = json.loads(out)
    assert record["input"] == "examples/tfjob-v1alpha1.yaml:1"
    assert record["converted"]["apiVersion"] == "kubeflow.org/v1"
    assert record["podgroup"]["kind"] == "PodGroup" and record["patch"]
    code, out, _ = _run(capsys, "-f", "examples", "-o", "json", "--converted-only")
    listed = json.loads(out)
    assert (listed["kind"], len(listed["items"])) == ("List", 9)
    assert "PodGroup" not in {item["kind"] for item in listed["items"]}


# Arbitrary YAML: scalars, lists and mappings, with the keys of Kubernetes objects likely.
_KEYS = st.sampled_from(["apiVersion", "kind", "metadata", "spec", "name", "items", "tasks", "replicas", "template"])
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
_VALUES = st.recursive(
    _SCALARS
    | st.sampled_from(["v1", "Pod", "List", "kubeflow.org/v1", "TFJob", "batch.volcano.sh/v1alpha1", "Job"])
    | st.sampled_from(["sparkoperator.k8s.io/v1beta2", "SparkApplication", "kubeflow.org/v1alpha1", "PodGroup"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS | st.text(max_size=6), inner, max_size=5),
    max_leaves=25,
)

_KINDS = [
    (f"{a.registration.group}/{version}".lstrip("/"), a.registration.kind)
    for a in registry.ADAPTERS
    for version in a.registration.versions
]
_KINDS += [("kubeflow.org/v1alpha1", "TFJob"), ("kubeflow.org/v1alpha2", "MPIJob"), (PODGROUP, "PodGroup")]
# Objects of the kinds we handle, with arbitrary fields: what reaches the adapters.
_OBJECTS = st.builds(
    lambda kind, fields: {**fields, "apiVersion": kind[0], "kind": kind[1]},
    st.sampled_from(_KINDS),
    st.dictionaries(_KEYS, _VALUES, max_size=4),
)


def _translate_text(tmp_path: pathlib.Path, name: str, text: str) -> int:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return cli.main(["translate", "-f", str(path), "--explain-skipped"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents=st.lists(_VALUES | _OBJECTS, min_size=1, max_size=3), name=st.sampled_from(["m.yaml", "m.json", "m"]))
def test_translate_never_raises_on_arbitrary_yaml(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], documents: list[Any], name: str
) -> None:
    assert _translate_text(tmp_path, name, yaml.safe_dump_all(documents)) in (0, 1)
    capsys.readouterr()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(), name=st.sampled_from(["m.yaml", "m.json", "m.sh", "m"]))
def test_translate_never_raises_on_arbitrary_text(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], text: str, name: str
) -> None:
    assert _translate_text(tmp_path, name, text) in (0, 1)
    assert _translate_text(tmp_path, "s.sh", "spark-submit " + text) in (0, 1)
    capsys.readouterr()


def test_json_on_stdin_is_read_as_json(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = b'{\n\t"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}\n}\n'  # a tab: not YAML
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text)))
    expected = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n---\n"
    assert _run(capsys, "-f", "-", "--converted-only") == (0, expected, "")
