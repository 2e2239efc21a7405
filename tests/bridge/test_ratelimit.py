"""The kernel's token bucket (pure: the time is an argument)."""

from __future__ import annotations

import pytest

from bridge import ratelimit


def test_a_bucket_lets_its_burst_through_at_once_then_spaces_calls_at_its_rate() -> None:
    bucket = ratelimit.Bucket(rate=10.0, burst=3)
    assert [bucket.take(0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    # Reservations queue up: the 4th waits a tenth of a second, the 5th two tenths.
    assert bucket.take(0.0) == pytest.approx(0.1)
    assert bucket.take(0.0) == pytest.approx(0.2)
    # Half a second later the two owed tokens are paid and three more have come in: full again.
    assert bucket.take(0.5) == 0.0
    assert bucket.tokens == pytest.approx(2.0), "at most burst tokens, never more however long it waits"


def test_a_bucket_paces_a_long_run_of_calls_at_its_rate() -> None:
    bucket = ratelimit.Bucket(rate=50.0, burst=50)
    waits = [bucket.take(0.0) for _ in range(550)]
    assert waits[:50] == [0.0] * 50
    assert waits[-1] == pytest.approx(500 / 50), "the 550th call goes 10 s after the first 50"


def test_a_token_given_back_is_there_for_the_next_call() -> None:
    bucket = ratelimit.Bucket(rate=1.0, burst=1)
    assert bucket.take(0.0) == 0.0
    assert bucket.take(0.0) == pytest.approx(1.0)
    bucket.give_back(0.0)  # the caller was cancelled while it waited (its job was deleted)
    assert bucket.take(0.0) == pytest.approx(1.0), "the next caller waits only for the token not handed back"


def test_time_going_backwards_does_not_mint_tokens() -> None:
    bucket = ratelimit.Bucket(rate=1.0, burst=1)
    bucket.take(10.0)
    assert bucket.take(5.0) == pytest.approx(1.0)


@pytest.mark.parametrize(("rate", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_a_bucket_refuses_a_rate_or_burst_that_lets_nothing_through(rate: float, burst: int) -> None:
    with pytest.raises(ValueError, match="rate > 0 and burst >= 1"):
        ratelimit.Bucket(rate=rate, burst=burst)


def test_wait_says_when_a_token_is_there_and_reserves_nothing() -> None:
    bucket = ratelimit.Bucket(rate=4.0, burst=1)
    assert bucket.wait(0.0) == 0.0
    assert bucket.take(0.0) == 0.0
    assert bucket.wait(0.0) == 0.25
    assert bucket.wait(0.0) == 0.25, "asking twice reserves nothing"
    assert bucket.wait(0.25) == 0.0
