"""The controller's slow-start batch sizes (its token buckets: ``tests/bridge/test_ratelimit.py``)."""

from __future__ import annotations

import itertools

from bridge.vcjobcontrol import pacing as vcjob_pacing


def test_slow_start_batches_double_from_one() -> None:
    assert list(itertools.islice(vcjob_pacing.batches(), 6)) == [1, 2, 4, 8, 16, 32]
    assert list(itertools.islice(vcjob_pacing.batches(3), 3)) == [3, 6, 12]
    # kube's slowStartBatch: 10,000 creates in 14 batches, a refused template costs one call.
    sizes = list(itertools.takewhile(lambda n: n < 10_000, itertools.accumulate(vcjob_pacing.batches())))
    assert len(sizes) + 1 == 14
