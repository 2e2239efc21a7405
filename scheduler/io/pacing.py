"""Pacing for the scheduler's status writes: a token bucket and a coalescing queue. No I/O.

- ``Bucket(qps, burst)``: ``wait()`` is how long until a token is there, ``take()`` takes one
  (``await bucket.acquire()`` does both); the kernel's token bucket (``bridge.ratelimit``,
  client-go's: ``burst`` tokens at most, ``qps`` added a second) read on a clock.
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

from bridge import ratelimit

__all__ = ["Bucket", "Coalescing"]

V = TypeVar("V")


class Bucket:
    """The kernel's token bucket (``bridge.ratelimit``) on a clock, for one task that awaits."""

    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._bucket = ratelimit.Bucket(qps, burst)
        self.clock = clock

    def wait(self) -> float:
        """Seconds until a token is there (0: one is)."""
        return self._bucket.wait(self.clock())

    def take(self) -> None:
        self._bucket.take(self.clock())

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
