"""simulate: the shipped tiny trace gives the makespan and waits worked out by hand.

One 4-cpu node. a (2 × 2 cpu, 10 s) arrives at 0 and runs at once; b (1 × 4 cpu, 5 s) arrives
at 1 and c (2 × 1 cpu, 3 s) at 2; both wait for a. At 10 b goes first (created earlier) and
takes the whole node until 15; c runs 15-18. So makespan 18; waits a 0, b 9, c 13: mean 22/3,
p50 9, p95 13 (nearest rank); cpu in use 100 % over [0, 15) and 50 % over [15, 18): 16.5/18.
"""

from __future__ import annotations

import argparse
import pathlib

import pytest
import yaml

from bridge import errors
from scheduler.tools import simulate
from vbridge.commands import simulate as simulate_command

ROOT = pathlib.Path(__file__).resolve().parents[3]
TINY = ROOT / "examples" / "traces" / "tiny.yaml"


def _tiny() -> simulate.Trace:
    return simulate.parse(yaml.safe_load(TINY.read_text()))


def test_tiny_trace_matches_the_hand_computation() -> None:
    result = simulate.run(_tiny())
    assert result.makespan == 18.0
    assert result.job_waits == (("a", "default", 0.0), ("b", "default", 9.0), ("c", "default", 13.0))
    assert result.waits == (simulate.Waits("default", 3, 22 / 3, 9.0, 13.0),)
    assert result.mean_utilization["cpu"] == pytest.approx(16.5 / 18)
    assert (result.finished, result.unfinished, result.evictions) == (3, (), 0)


def test_replay_is_deterministic_and_reports_progress() -> None:
    seen: list[tuple[float, int, int]] = []
    first = simulate.run(_tiny(), progress=lambda t, done, total: seen.append((t, done, total)))
    assert first == simulate.run(_tiny())
    assert seen[0] == (0.0, 0, 3) and seen[-1] == (18.0, 3, 3)


def test_a_job_that_can_never_fit_is_reported_not_looped_on() -> None:
    doc = yaml.safe_load(TINY.read_text())
    doc["jobs"].append({"name": "huge", "arrival": 0, "duration": 1, "tasks": [{"requests": {"cpu": "64"}}]})
    result = simulate.run(simulate.parse(doc))
    assert result.makespan is None and result.unfinished == ("huge",) and result.finished == 3


def test_percentile_is_nearest_rank() -> None:
    assert [simulate.percentile([1, 2, 3, 4], q) for q in (25, 50, 95, 100)] == [1, 2, 4, 4]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"nodes": [], "jobs": []}, "invalid trace: nodes: expected a list of at least 1 mapping"),
        (
            {"nodes": [{"name": "n"}], "jobs": [{"duration": 1, "queue": "x", "tasks": [{"requests": {}}]}]},
            "invalid trace: jobs\\[0\\].queue: queue 'x' is not declared in queues",
        ),
        ({"nodes": [{"name": "n"}], "jobs": [{"tasks": []}]}, "invalid trace: jobs\\[0\\]: 'duration' is required"),
    ],
)
def test_bad_traces_are_config_errors(doc: dict[str, object], message: str) -> None:
    with pytest.raises(errors.ConfigError, match=message):
        simulate.parse(doc)


def test_command_prints_the_report_and_writes_the_plot(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "tiny.png"
    args = argparse.Namespace(trace=str(TINY), plot=str(target), no_plot=False, quiet=False)
    assert simulate_command.main(args) == 0
    out, err = capsys.readouterr()
    assert "makespan: 18 s" in out and "default: 3 job(s), mean 7.3 s, p50 9 s, p95 13 s" in out
    assert err == ""  # no progress line when stderr is not a terminal (a log gets no \r lines)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
