"""The controller's token buckets and slow-start batch sizes (pure: the time is an argument)."""

from __future__ import annotations

import itertools

import pytest

from bridge.adapters.vcjob import pacing


def test_a_bucket_lets_its_burst_through_at_once_then_spaces_calls_at_its_rate() -> None:
    bucket = pacing.Bucket(rate=10.0, burst=3)
    assert [bucket.take(0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    # Reservations queue up: the 4th waits a tenth of a second, the 5th two tenths.
    assert bucket.take(0.0) == pytest.approx(0.1)
    assert bucket.take(0.0) == pytest.approx(0.2)
    # Half a second later the two owed tokens are paid and three more have come in: full again.
    assert bucket.take(0.5) == 0.0
    assert bucket.tokens == pytest.approx(2.0), "at most burst tokens, never more however long it waits"


def test_a_bucket_paces_a_long_run_of_calls_at_its_rate() -> None:
    bucket = pacing.Bucket(rate=50.0, burst=50)
    waits = [bucket.take(0.0) for _ in range(550)]
    assert waits[:50] == [0.0] * 50
    assert waits[-1] == pytest.approx(500 / 50), "the 550th call goes 10 s after the first 50"


def test_a_token_given_back_is_there_for_the_next_call() -> None:
    bucket = pacing.Bucket(rate=1.0, burst=1)
    assert bucket.take(0.0) == 0.0
    assert bucket.take(0.0) == pytest.approx(1.0)
    bucket.give_back(0.0)  # the caller was cancelled while it waited (its job was deleted)
    assert bucket.take(0.0) == pytest.approx(1.0), "the next caller waits only for the token not handed back"


def test_time_going_backwards_does_not_mint_tokens() -> None:
    bucket = pacing.Bucket(rate=1.0, burst=1)
    bucket.take(10.0)
    assert bucket.take(5.0) == pytest.approx(1.0)


@pytest.mark.parametrize(("rate", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_a_bucket_refuses_a_rate_or_burst_that_lets_nothing_through(rate: float, burst: int) -> None:
    with pytest.raises(ValueError, match="rate > 0 and burst >= 1"):
        pacing.Bucket(rate=rate, burst=burst)


def test_slow_start_batches_double_from_one() -> None:
    assert list(itertools.islice(pacing.batches(), 6)) == [1, 2, 4, 8, 16, 32]
    assert list(itertools.islice(pacing.batches(3), 3)) == [3, 6, 12]
    # kube's slowStartBatch: 10,000 creates in 14 batches, a refused template costs one call.
    sizes = list(itertools.takewhile(lambda n: n < 10_000, itertools.accumulate(pacing.batches())))
    assert len(sizes) + 1 == 14
