"""Pacing for the scheduler's status writes: a token bucket and a coalescing queue. No I/O.

- ``Bucket(qps, burst)``: ``wait()`` is how long until a token is there, ``take()`` takes one
  (``await bucket.acquire()`` does both); client-go's token bucket: ``burst`` tokens at most,
  ``qps`` added a second.
- ``Coalescing``: what is left to write, one entry per slot (an object and what is written to
  it), in tiers written in order (tier 0 first). ``put`` of a slot already queued replaces its
  value in place (the latest wins, its place in line kept, so a value rewritten every cycle is
  never starved); so the queue never holds more entries than there are slots.

Both are plain data with the clock handed in (``time.monotonic`` by default), for the tests.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Bucket", "Coalescing"]

V = TypeVar("V")


class Bucket:
    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"a token bucket needs qps > 0 and burst >= 1, not {qps} and {burst}")
        self.qps = qps
        self.burst = float(burst)
        self.clock = clock
        self._tokens = float(burst)
        self._at = clock()

    def _refill(self) -> None:
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.qps)
        self._at = now

    def wait(self) -> float:
        """Seconds until a token is there (0: one is)."""
        self._refill()
        return 0.0 if self._tokens >= 1.0 else (1.0 - self._tokens) / self.qps

    def take(self) -> None:
        self._refill()
        self._tokens -= 1.0

    async def acquire(self) -> None:
        """Wait for a token and take it."""
        while (delay := self.wait()) > 0:
            await asyncio.sleep(delay)
        self.take()


class Coalescing(Generic[V]):
    def __init__(self, tiers: int) -> None:
        self._tiers: list[collections.OrderedDict[str, V]] = [collections.OrderedDict() for _ in range(tiers)]
        self._tier_of: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._tier_of)

    def __contains__(self, slot: str) -> bool:
        return slot in self._tier_of

    def put(self, tier: int, slot: str, value: V) -> bool:
        """Queue ``value`` for ``slot``; True when it replaced a value still queued (coalesced)."""
        queued = self._tier_of.get(slot)
        if queued is not None and queued != tier:
            del self._tiers[queued][slot]
        self._tier_of[slot] = tier
        self._tiers[tier][slot] = value
        return queued is not None

    def get(self, slot: str) -> V | None:
        tier = self._tier_of.get(slot)
        return None if tier is None else self._tiers[tier][slot]

    def discard(self, slot: str) -> bool:
        """Forget ``slot``'s queued value; True when there was one."""
        tier = self._tier_of.pop(slot, None)
        if tier is None:
            return False
        del self._tiers[tier][slot]
        return True

    def pop(self) -> tuple[str, V] | None:
        """The first entry of the first tier that has one, removed; None when empty."""
        for entries in self._tiers:
            if entries:
                slot, value = entries.popitem(last=False)
                del self._tier_of[slot]
                return slot, value
        return None
