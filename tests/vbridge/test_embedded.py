"""`vbridge up`'s report of the operators' jobs: the state in each operator's own words."""

from __future__ import annotations

from vbridge import embedded


def test_job_state_of_a_spark_application_is_its_application_state() -> None:
    assert embedded.job_state({"status": {"applicationState": {"state": "COMPLETED"}}}) == "COMPLETED"
    assert embedded.job_state({"status": {"applicationState": None}}) == ""


def test_job_state_of_a_kubeflow_job_is_its_latest_true_condition() -> None:
    conditions = [
        {"type": "Created", "status": "True"},
        {"type": "Running", "status": "False"},
        {"type": "Succeeded", "status": "True"},
    ]
    assert embedded.job_state({"status": {"conditions": conditions}}) == "Succeeded"
    assert embedded.job_state({"status": {"conditions": conditions[:2]}}) == "Created"
    assert embedded.job_state({}) == ""
