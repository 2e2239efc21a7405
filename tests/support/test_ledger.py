"""``ledger.Ledger``: finished work is remembered once seen, plain gangs are handed back once."""

from __future__ import annotations

from tests.support import accounting, ledger


def test_a_job_is_recorded_at_its_first_terminal_phase_and_a_gang_once_all_succeeded() -> None:
    book = ledger.Ledger()
    running = accounting.Tally(
        jobs={"ns/j": "Running"},
        groups={"ns/g": (2, 2, "Running")},
        members={"ns/g": ["g-0: Succeeded on n1", "g-1: Running on n2"]},
    )
    assert book.observe(running, {"ns/g"}) == [] and book.missing(["ns/j"], ["ns/g"]) == ["ns/j", "ns/g"]
    done = accounting.Tally(
        jobs={"ns/j": "Completed"},
        groups={"ns/g": (2, 2, "Running")},
        members={"ns/g": ["g-0: Succeeded on n1", "g-1: Succeeded on n2"]},
    )
    assert book.observe(done, {"ns/g"}) == ["ns/g"]
    assert book.observe(done, {"ns/g"}) == []  # handed back once
    book.observe(accounting.Tally(jobs={"ns/j": "Failed"}), {"ns/g"})
    assert book.jobs == {"ns/j": "Completed"} and book.gangs == {"ns/g": 2}
    assert book.finished(["ns/j", "ns/gone"], ["ns/g"]) == 2 and book.missing(["ns/gone"], []) == ["ns/gone"]


def test_a_gang_with_a_pod_missing_or_unbound_is_not_finished() -> None:
    book = ledger.Ledger()
    short = accounting.Tally(groups={"ns/g": (2, 1, "")}, members={"ns/g": ["g-0: Succeeded on n1"]})
    assert book.observe(short, {"ns/g"}) == [] and not book.gangs
