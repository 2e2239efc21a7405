"""``vbridge simulate``: errors at their line, progress only for a terminal, a plot read at a glance."""

from __future__ import annotations

import argparse
import pathlib
import textwrap

import pytest
import yaml

from bridge import errors
from scheduler.tools import simulate
from vbridge import cli
from vbridge.commands import simulate as simulate_command

ROOT = pathlib.Path(__file__).resolve().parents[3]
TRACE = textwrap.dedent(
    """\
    period: 1
    nodes:
      - {name: n, cpu: 4, memory: 16Gi}
    jobs:
      - name: a
        arival: 0
        duration: 10
        tasks: [{name: worker, replicas: 2, requests: {cpu: "2", memory: lots}}]
    """
)


def _write(tmp_path: pathlib.Path, text: str) -> pathlib.Path:
    path = tmp_path / "trace.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("", "", "6:5: jobs[0].arival: unknown key; did you mean 'arrival'?"),  # the key's own line and column
        ("arival", "arrival", "8:70: jobs[0].tasks[0].requests.memory: expected a quantity such as 2, 500m or 4Gi"),
        ("duration: 10", "duration: [10", "8:10: not YAML: while parsing a flow sequence: expected ','"),
    ],
)
def test_trace_errors_name_the_file_line_and_column(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], old: str, new: str, message: str
) -> None:
    path = _write(tmp_path, TRACE.replace(old, new) if old else TRACE)
    assert cli.main(["simulate", str(path), "--no-plot"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"vbridge: error: {path}:{message}") and err.count("\n") == 1, err


def test_progress_only_on_a_terminal(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    args = argparse.Namespace(trace=str(ROOT / "examples/traces/tiny.yaml"), plot=None, no_plot=True, quiet=False)
    assert simulate_command.main(args) == 0
    assert capsys.readouterr().err == ""  # a log or a pipe gets no \r lines
    monkeypatch.setattr(simulate_command.sys.stderr, "isatty", lambda: True)
    assert simulate_command.main(args) == 0
    err = capsys.readouterr().err
    assert err.startswith("\rsimulating: t=0 s, 0/3 jobs finished") and err.endswith("18 s, 3/3 jobs finished\n")


def test_the_plot_shows_each_queue_in_its_own_style_with_the_legend_outside() -> None:
    pytest.importorskip("matplotlib")
    trace = simulate.parse(yaml.safe_load((ROOT / "examples/traces/two-queues.yaml").read_text()))
    result = simulate.run(trace)
    fig = simulate_command.figure(result, "two-queues.yaml: makespan 350 s")
    try:
        used, queues, waits = fig.axes
        assert fig._suptitle.get_text() == "two-queues.yaml: makespan 350 s"
        assert [line.get_label() for line in used.get_lines()] == ["cpu", "memory", "nvidia.com/gpu"]
        assert [line.get_label() for line in queues.get_lines()] == ["batch", "research"]
        for ax in (used, queues):
            styles = [line.get_linestyle() for line in ax.get_lines()]
            assert len(set(styles)) == len(styles)  # no line hidden under another of the same style
        fig.canvas.draw()
        for ax in (used, queues, waits):
            legend = ax.get_legend().get_window_extent()
            assert legend.x0 >= ax.get_window_extent().x1  # beside the axes, over no line
        research = [s.queues["research"] for s in result.utilization]
        assert max(research) == 1.0 and min(research) == 0.0  # it held the whole cluster at times, and nothing
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_a_missing_trace_is_one_line(tmp_path: pathlib.Path) -> None:
    with pytest.raises(errors.ConfigError, match=r".*absent.yaml: cannot read: No such file or directory$"):
        simulate_command.load(tmp_path / "absent.yaml")
