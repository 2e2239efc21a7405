"""Where a long run's memory grows: Python allocations traced (``tracemalloc``) and grouped by
who made them, so a rise in RSS can be told apart as the product's, the test's own records, a
library's, or not Python's at all (the allocator's arenas, native buffers).

``with traced() as tracer:`` traces for the block (one frame per allocation: cheap enough for a
ten-minute run); ``mark()`` takes the baseline snapshot (the churn run's half-way point); ``report()`` compares the
live allocations at the end with the baseline, by source file, and sums them by ``owner``, once as
the run left them and once after a full collection (memory only reference cycles held is
garbage awaiting the collector, not a leak).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import sysconfig
import tracemalloc
from collections.abc import Iterator

__all__ = ["Growth", "Tracer", "owner", "traced"]

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PRODUCT = ("bridge", "scheduler", "webhooks", "vbridge", "podgroup_templates")
_STDLIB = sysconfig.get_paths()["stdlib"]


def owner(filename: str) -> str:
    """``product``, ``tests``, ``library`` (site-packages), ``stdlib`` or ``other``."""
    if "site-packages" in filename or "dist-packages" in filename:
        return "library"
    if filename.startswith(_ROOT + os.sep):
        top = filename[len(_ROOT) + 1 :].split(os.sep, 1)[0]
        return "product" if top in _PRODUCT else "tests" if top == "tests" else "other"
    if filename.startswith(_STDLIB):
        return "stdlib"
    return "other"


@dataclasses.dataclass
class Growth:
    """Traced bytes gained between the mark and the report, per owner and the largest files: as
    the run left them, and once a full collection has freed what only cycles still held."""

    by_owner: dict[str, int]
    top: list[tuple[str, int]]  # (file relative to the checkout or site-packages, bytes), largest first
    traced_now: int
    collected_by_owner: dict[str, int]
    collected_top: list[tuple[str, int]]
    overhead: int  # tracemalloc's own memory at the end (in RSS, not in the traced heap)

    def text(self) -> str:
        return (
            f"traced Python heap {self.traced_now / 2**20:.0f} MiB at the end (the tracer's own memory "
            f"{self.overhead / 2**20:.0f} MiB, in RSS); its growth over the last half, MiB, "
            f"{_describe(self.by_owner, self.top)}; after a full collection: "
            f"{_describe(self.collected_by_owner, self.collected_top)}"
        )


def _describe(by_owner: dict[str, int], top: list[tuple[str, int]]) -> str:
    owners = ", ".join(f"{k} {v / 2**20:+.1f}" for k, v in sorted(by_owner.items(), key=lambda kv: -kv[1]))
    files = ", ".join(f"{name} {size / 2**20:+.1f}" for name, size in top)
    return f"by owner: {owners}; largest files: {files}"


class Tracer:
    """Start it before what it is to watch is made: memory allocated before ``start`` is not traced,
    so a connection or cache entry made earlier and replaced later would look like growth."""

    def __init__(self) -> None:
        self._mark: dict[str, int] = {}

    def mark(self) -> None:
        self._mark = _by_file()  # sizes only: a whole snapshot held to the end would weigh on RSS

    def report(self, top: int = 8) -> Growth:
        end = _by_file()
        traced = tracemalloc.get_traced_memory()[0]
        gc.collect()
        collected = _by_file()
        return Growth(
            *self._compare(end, top), traced, *self._compare(collected, top), tracemalloc.get_tracemalloc_memory()
        )

    def _compare(self, end: dict[str, int], top: int) -> tuple[dict[str, int], list[tuple[str, int]]]:
        by_owner: dict[str, int] = {}
        files: list[tuple[str, int]] = []
        for name in end.keys() | self._mark.keys():
            diff = end.get(name, 0) - self._mark.get(name, 0)
            by_owner[owner(name)] = by_owner.get(owner(name), 0) + diff
            files.append((_short(name), diff))
        files.sort(key=lambda item: -item[1])
        return by_owner, files[:top]


@contextlib.contextmanager
def traced() -> Iterator[Tracer]:
    """Python allocations traced for the block; its ``Tracer`` marks and reports."""
    tracemalloc.start(1)
    try:
        yield Tracer()
    finally:
        tracemalloc.stop()


def _by_file() -> dict[str, int]:
    return {stat.traceback[0].filename: stat.size for stat in _snapshot().statistics("filename")}


def _snapshot() -> tracemalloc.Snapshot:
    # The tracer's own bookkeeping is not the run's.
    return tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])


def _short(filename: str) -> str:
    for marker in ("site-packages" + os.sep, _ROOT + os.sep, _STDLIB + os.sep):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename
