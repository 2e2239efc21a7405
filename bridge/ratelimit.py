"""client-go's token bucket (``flowcontrol.NewTokenBucketRateLimiter``), the one every paced
caller uses: the Volcano Job controller's creates and the scheduler's status writes.

Pure: the time is an argument, never read here; callers sleep. ``rate`` tokens a second up to
``burst``; :meth:`Bucket.take` reserves one and says how long to wait before using it
(reservations queue up in order, as ``rate.Limiter.Reserve``), :meth:`Bucket.wait` only says how
long until one is there, and :meth:`Bucket.give_back` returns one that was not used.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Bucket"]


@dataclasses.dataclass
class Bucket:
    rate: float  # tokens a second, > 0
    burst: int  # tokens at most, ≥ 1
    tokens: float = dataclasses.field(init=False)  # starts full; negative: owed to reservations
    last: float | None = dataclasses.field(init=False, default=None)  # when ``tokens`` was brought up to date

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.burst < 1:
            raise ValueError(
                f"a token bucket needs rate > 0 and burst >= 1 (client-go's qps > 0 and burst >= 1), "
                f"got {self.rate}, {self.burst}"
            )
        self.tokens = float(self.burst)

    def _fill(self, now: float) -> None:
        if self.last is not None and now > self.last:
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        if self.last is None or now > self.last:
            self.last = now

    def wait(self, now: float) -> float:
        """Seconds from ``now`` until a token is there (0: one is), reserving nothing."""
        self._fill(now)
        return 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate

    def take(self, now: float) -> float:
        """Reserve one token at ``now``: the seconds to wait before using it (0: at once)."""
        self._fill(now)
        self.tokens -= 1.0
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def give_back(self, now: float) -> None:
        """Return a reserved token that was not used."""
        self._fill(now)
        self.tokens = min(float(self.burst), self.tokens + 1.0)
