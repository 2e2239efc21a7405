"""How fast the Volcano Job controller calls the apiserver: slow-start batches (its token buckets
are the kernel's, ``bridge.ratelimit``; ``vbridge.controllers.vcjob_create`` sleeps).

- :func:`batches` are the sizes of kube-controller-manager's ``slowStartBatch`` (the Job and
  ReplicaSet controllers): 1, 2, 4, ... The caller sends one batch at a
  time and stops at the first failure, so a template the apiserver refuses, or chokes on, costs
  one request per attempt instead of one per pod.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["batches"]


def batches(first: int = 1) -> Iterator[int]:
    """Slow-start batch sizes, for ever: ``first``, then each twice the last (the caller takes
    what is left of its calls at each size, and stops at the first failure)."""
    size = max(first, 1)
    while True:
        yield size
        size *= 2
