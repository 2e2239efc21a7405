"""One line for every apiserver answer and dropped connection, saying what to do (never a raw ``404 NotFound: ...``)."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from bridge import errors
from vbridge import cli
from vbridge.commands import output

MISSING_API = "the server could not find the requested resource"


@pytest.mark.parametrize(
    ("status", "reason", "message", "line"),
    [
        (404, "NotFound", 'jobs.batch.volcano.sh "x" not found', "job ns/x not found; list them: vbridge job list"),
        (404, "NotFound", MISSING_API, "job ns/x: this cluster does not serve the API (are the CRDs installed?"),
        (409, "AlreadyExists", 'queues "q" already exists', "job ns/x already exists; list them: vbridge job list"),
        (403, "Forbidden", "user u cannot get jobs", "job ns/x: forbidden (user u cannot get jobs); ask for RBAC"),
        (401, "Unauthorized", "", "job ns/x: the apiserver refused this kubeconfig's credentials; log in again"),
        (422, "Invalid", "spec.weight: must be >= 1", "job ns/x: the apiserver refused it: spec.weight: must be >= 1"),
        (500, "InternalError", "etcd down", "job ns/x: the apiserver answered 500 InternalError: etcd down"),
    ],
)
def test_describe_an_answer(status: int, reason: str, message: str, line: str) -> None:
    text = output.describe(errors.ApiError(status, reason, message), "job ns/x", hint="list them: vbridge job list")
    assert text.startswith(line) and "\n" not in text
    assert f"{status} {reason}:" not in text or status == 500


def test_describe_a_dropped_connection() -> None:
    text = output.describe(ConnectionRefusedError(111, "Connection refused"), "listing Queues")
    assert text == (
        "listing Queues: cannot reach the apiserver ([Errno 111] Connection refused); "
        "is the cluster up? check --kubeconfig and --context"
    )


@pytest.mark.parametrize(
    "argv", [["list"], ["job", "list"], ["job", "view", "x"], ["queue", "list"], ["explain", "pg/x"]], ids=" ".join
)
def test_an_unreachable_cluster_is_one_line_and_exit_1(
    argv: list[str], tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    assert cli.main([*argv, f"--kubeconfig={kubeconfig}"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("vbridge: error: ") and "cannot reach the apiserver" in err
