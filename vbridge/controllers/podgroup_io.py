"""Create or correct one PodGroup: the I/O every reconciler shares.

What a correction writes is decided by ``bridge.podgroups.correction`` (pure); here: create,
and on 409 read the group, write the correction, and retry on a write conflict.
"""

from __future__ import annotations

import asyncio
from typing import Any

from bridge import defaults, errors, podgroups
from bridge.k8s import client, paths

__all__ = ["CONFLICT_RETRIES", "PG", "ensure"]

PG = defaults.PODGROUP_API
# Write conflicts on a PodGroup are routine: the scheduler writes its status (PodGroups have no
# status subresource) and several executors may add themselves as owners at once.
CONFLICT_RETRIES = 5


async def ensure(api: client.Client, desired: dict[str, Any], *, fill_only: bool = False) -> str:
    """Make ``desired`` exist. Returns "created", "updated" or "unchanged".

    An existing group is corrected by ``podgroups.correction`` (with ``fill_only``: only what is
    missing is added). Corrections are written with a resourceVersion precondition and read
    again on a conflict (see ``CONFLICT_RETRIES``).
    """
    meta = desired["metadata"]
    base = paths.resource(PG, "podgroups", namespace=meta["namespace"])
    try:
        await api.request("POST", base, body=desired)
        return "created"
    except errors.ApiError as exc:
        if exc.status != 409:
            raise
    path = f"{base}/{meta['name']}"
    attempt = 1
    while True:
        try:
            body = podgroups.correction(await api.request("GET", path), desired, fill_only=fill_only)
            if body is None:
                return "unchanged"
            await api.request("PATCH", path, body=body, content_type=client.MERGE)
            return "updated"
        except errors.ApiError as exc:
            if exc.status != 409 or attempt == CONFLICT_RETRIES:
                raise
        await asyncio.sleep(0.05 * attempt)
        attempt += 1
