"""Which gangs a cycle leaves out (``io.parking``): events, backoff, their own pods. Pure."""

from __future__ import annotations

from scheduler.io import parking

ROOM = parking.WAITS_FOR_ROOM


def test_a_parked_gang_waits_for_an_event_and_its_backoff() -> None:
    park = parking.Parking(first=1.0, most=10.0)
    park.park({"ns/big": ROOM}, now=0.0, generation=5)
    assert park.current(0.5, 5, set()) == {"ns/big"}
    assert park.current(0.5, 6, set()) == {"ns/big"}  # an event, but the backoff (1 s) has not passed
    assert park.current(5.0, 5, set()) == {"ns/big"}  # the backoff passed, but nothing changed
    assert park.current(1.0, 6, set()) == frozenset()  # both: let go
    assert len(park) == 0


def test_without_events_a_parked_gang_is_let_go_after_the_longest_backoff() -> None:
    park = parking.Parking(first=1.0, most=10.0)
    park.park({"ns/big": ROOM}, now=0.0, generation=1)
    assert park.current(9.9, 1, set()) == {"ns/big"}
    assert park.current(10.0, 1, set()) == frozenset()


def test_backoff_doubles_per_failed_attempt_up_to_the_most_and_resets_once_placed() -> None:
    park = parking.Parking(first=1.0, most=10.0)
    waits = []
    now = 0.0
    for _ in range(6):
        park.park({"ns/g": ROOM}, now=now, generation=0)
        start = now
        while park.current(now, 1, set()):  # an event has happened: only the backoff holds it
            now += 0.25
        waits.append(now - start)
    assert waits == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    park.forget(["ns/g"])
    park.park({"ns/g": ROOM}, now=now, generation=0)
    assert park.current(now + 1.0, 1, set()) == frozenset()  # back to the first backoff


def test_a_gang_waiting_for_its_pods_is_let_go_when_one_comes() -> None:
    park = parking.Parking()
    park.park({"ns/short": "NotEnoughTasks", "ns/big": ROOM}, now=0.0, generation=0)
    # A new pod of a gang that needs room changes nothing for it; one of a gang short of pods does.
    assert park.current(0.1, 0, {"ns/short", "ns/big"}) == {"ns/big"}


def test_gangs_that_are_gone_are_forgotten() -> None:
    park = parking.Parking()
    park.park({"ns/a": ROOM, "ns/b": ROOM}, now=0.0, generation=0)
    park.keep_only({"ns/b"})
    assert park.current(0.0, 0, set()) == {"ns/b"}
