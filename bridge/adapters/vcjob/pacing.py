"""How fast the Volcano Job controller calls the apiserver: token buckets and slow-start batches.

Pure: the time is an argument, never read here; ``vbridge.controllers.vcjob_create`` sleeps.

- :class:`Bucket` is client-go's token bucket (``flowcontrol.NewTokenBucketRateLimiter``):
  ``rate`` tokens a second up to ``burst``; :meth:`Bucket.take` reserves one and says how long
  to wait before using it (reservations queue up in order, as ``rate.Limiter.Reserve``), and
  :meth:`Bucket.give_back` returns one that was not used (a job deleted while waiting);
- :func:`batches` are the sizes of kube-controller-manager's ``slowStartBatch`` (the Job and
  ReplicaSet controllers): 1, 2, 4, ... The caller sends one batch at a
  time and stops at the first failure, so a template the apiserver refuses, or chokes on, costs
  one request per attempt instead of one per pod.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

__all__ = ["Bucket", "batches"]


@dataclasses.dataclass
class Bucket:
    rate: float  # tokens a second, > 0
    burst: int  # tokens at most, ≥ 1
    tokens: float = dataclasses.field(init=False)  # starts full; negative: owed to reservations
    last: float | None = dataclasses.field(init=False, default=None)  # when ``tokens`` was brought up to date

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.burst < 1:
            raise ValueError(f"a bucket needs rate > 0 and burst >= 1, got {self.rate}, {self.burst}")
        self.tokens = float(self.burst)

    def _fill(self, now: float) -> None:
        if self.last is not None and now > self.last:
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        if self.last is None or now > self.last:
            self.last = now

    def take(self, now: float) -> float:
        """Reserve one token at ``now``: the seconds to wait before using it (0: at once)."""
        self._fill(now)
        self.tokens -= 1.0
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def give_back(self, now: float) -> None:
        """Return a reserved token that was not used."""
        self._fill(now)
        self.tokens = min(float(self.burst), self.tokens + 1.0)


def batches(first: int = 1) -> Iterator[int]:
    """Slow-start batch sizes, for ever: ``first``, then each twice the last (the caller takes
    what is left of its calls at each size, and stops at the first failure)."""
    size = max(first, 1)
    while True:
        yield size
        size *= 2
