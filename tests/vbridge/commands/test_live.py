"""``vbridge up``'s live view: redrawn in place on a terminal, one timestamped line per change otherwise."""

from __future__ import annotations

import datetime

from tests.builders import kubeflow
from tests.builders import scheduler as b
from vbridge.commands import listing, live

T = datetime.datetime(2025, 1, 1, 12, 0, 3)


def _groups(phase: str) -> list[dict[str, object]]:
    return [b.podgroup("pi", namespace="seed", phase=phase), b.podgroup("other", namespace="seed", phase="Running")]


def test_without_a_terminal_each_change_is_one_timestamped_line() -> None:
    view = live.Live(tty=False)
    first = view.update(listing.tables(_groups("Pending")), T).splitlines()
    assert first == [
        "12:00:03  PodGroup seed/other: phase Running, minmember 1, running 0, succeeded 0, queue default",
        "12:00:03  PodGroup seed/pi: phase Pending, minmember 1, running 0, succeeded 0, queue default",
    ]
    assert view.update(listing.tables(_groups("Pending")), T) == ""  # nothing changed: nothing printed
    later = T + datetime.timedelta(seconds=5)
    assert view.update(listing.tables(_groups("Running")), later) == (
        "12:00:08  PodGroup seed/pi: phase Running, minmember 1, running 0, succeeded 0, queue default"
    )
    assert view.update(listing.tables(_groups("Running")[1:]), later) == "12:00:08  PodGroup seed/pi: gone"


def test_on_a_terminal_the_view_is_drawn_over_the_last_one() -> None:
    view = live.Live(tty=True)
    first = view.update(listing.tables(_groups("Pending")), T)
    assert first.startswith(live.ERASE) and first.count("\n") == 2  # header and two rows: three lines
    assert view.update(listing.tables(_groups("Pending")), T) == ""
    second = view.update(listing.tables(_groups("Running")), T)
    assert second.startswith(live.up(3) + live.ERASE)  # back up over the three lines, then clear
    assert second.removeprefix(live.up(3) + live.ERASE) == first.removeprefix(live.ERASE).replace("Pending", "Running")


def test_operator_hints_show_once_and_not_for_a_running_operator() -> None:
    jobs = [kubeflow.tfjob("mnist")]
    view = live.Live(tty=False)
    [line, hint] = view.update(listing.tables(jobs), T).splitlines()
    assert line == "12:00:03  TFJob team-a/mnist: state -"
    assert hint.startswith("12:00:03  note: 1 TFJob(s) without status") and "training-operator" in hint
    assert view.update(listing.tables(jobs), T) == ""
    assert "note:" not in live.Live(tty=False, operators=("training-operator",)).update(listing.tables(jobs), T)


def test_on_a_terminal_long_lines_are_cut_to_its_width() -> None:
    frame = live.Live(tty=True, width=30).update(listing.tables(_groups("Pending")), T)
    lines = frame.removeprefix(live.ERASE).split("\n")
    assert len(lines) == 3 and all(len(line) <= 29 for line in lines)
    assert lines[1].startswith("seed        other   Running")
