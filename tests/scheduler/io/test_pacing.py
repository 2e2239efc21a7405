"""The status writer's pacing (``io.pacing``): the token bucket and the coalescing queue. Pure."""

from __future__ import annotations

import asyncio

import pytest

from scheduler.io import pacing


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_bucket_lets_a_burst_through_then_qps_a_second() -> None:
    clock = Clock()
    bucket = pacing.Bucket(4.0, 3, clock=clock)  # binary fractions: exact arithmetic
    for _ in range(3):
        assert bucket.wait() == 0.0
        bucket.take()
    assert bucket.wait() == 0.25  # the fourth: one token at 4 a second
    clock.now += 0.125
    assert bucket.wait() == 0.125
    clock.now += 0.125
    assert bucket.wait() == 0.0
    bucket.take()
    clock.now += 60.0  # a long quiet spell refills up to the burst, no more
    for _ in range(3):
        bucket.take()
    assert bucket.wait() == 0.25


def test_bucket_acquire_waits_for_a_token() -> None:
    async def run() -> float:
        bucket = pacing.Bucket(20.0, 1)
        loop = asyncio.get_running_loop()
        start = loop.time()
        for _ in range(5):  # one at once, four at 20 a second
            await bucket.acquire()
        return loop.time() - start

    assert 0.19 <= asyncio.run(run()) < 1.0


def test_bucket_refuses_nonsense_limits() -> None:
    with pytest.raises(ValueError, match="qps > 0"):
        pacing.Bucket(0.0, 1)
    with pytest.raises(ValueError, match="burst >= 1"):
        pacing.Bucket(1.0, 0)


def test_queue_coalesces_per_slot_keeping_its_place() -> None:
    queue: pacing.Coalescing[str] = pacing.Coalescing(1)
    assert not queue.put(0, "a", "a1")
    assert not queue.put(0, "b", "b1")
    assert queue.put(0, "a", "a2")  # replaced, still first in line
    assert len(queue) == 2 and "a" in queue and queue.get("a") == "a2"
    assert queue.pop() == ("a", "a2")
    assert queue.pop() == ("b", "b1")
    assert queue.pop() is None and not queue


def test_queue_serves_lower_tiers_first() -> None:
    queue: pacing.Coalescing[int] = pacing.Coalescing(2)
    for i in range(3):
        queue.put(1, f"pod{i}", i)
    queue.put(0, "pg", 9)
    queue.put(1, "pod3", 3)
    queue.put(0, "q", 8)
    assert [queue.pop() for _ in range(6)] == [
        ("pg", 9),
        ("q", 8),
        ("pod0", 0),
        ("pod1", 1),
        ("pod2", 2),
        ("pod3", 3),
    ]


def test_queue_is_bounded_by_its_slots_whatever_the_number_of_puts() -> None:
    queue: pacing.Coalescing[int] = pacing.Coalescing(2)
    coalesced = 0
    for cycle in range(50):  # 50 cycles of verdicts for 10,000 pods
        for pod in range(10_000):
            coalesced += queue.put(1, f"pod:{pod}", cycle)
    assert len(queue) == 10_000
    assert coalesced == 49 * 10_000
    assert queue.pop() == ("pod:0", 49)  # the latest value won


def test_queue_discard_and_moving_a_slot_between_tiers() -> None:
    queue: pacing.Coalescing[str] = pacing.Coalescing(2)
    queue.put(1, "x", "late")
    queue.put(1, "y", "y")
    assert queue.put(0, "x", "early")  # same slot, other tier: moved, not doubled
    assert len(queue) == 2
    assert queue.discard("y") and not queue.discard("y")
    assert queue.pop() == ("x", "early")
    assert queue.pop() is None
