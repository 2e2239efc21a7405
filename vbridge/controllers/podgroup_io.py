"""Create or correct one PodGroup: the piece every reconciler shares."""

from __future__ import annotations

import asyncio
from typing import Any

from bridge import defaults, errors
from bridge.k8s import client, paths

__all__ = ["OWNED_FIELDS", "ensure"]

PG = defaults.PODGROUP_API
OWNED_FIELDS = ("minMember", "minTaskMember", "minResources", "queue", "priorityClassName")
# Write conflicts on a PodGroup are routine: the scheduler writes its status (PodGroups have no
# status subresource) and several executors may add themselves as owners at once.
CONFLICT_RETRIES = 5


def _merge_value(current: Any, want: Any) -> Any:
    """A merge-patch value that makes a map exactly ``want`` (keys we do not want are nulled)."""
    if isinstance(current, dict) and isinstance(want, dict):
        return {**{k: None for k in current if k not in want}, **want}
    return want


async def ensure(api: client.Client, desired: dict[str, Any], *, fill_only: bool = False) -> str:
    """Make ``desired`` exist. Returns "created", "updated" or "unchanged".

    An existing group keeps every field we do not own. With ``fill_only`` (a user's template
    made it) we only add what is missing and override nothing the user set. Corrections are
    written with a resourceVersion precondition and read again on a conflict (see
    ``CONFLICT_RETRIES``).
    """
    meta = desired["metadata"]
    base = paths.resource(PG, "podgroups", namespace=meta["namespace"])
    try:
        await api.request("POST", base, body=desired)
        return "created"
    except errors.ApiError as exc:
        if exc.status != 409:
            raise
    attempt = 1
    while True:
        try:
            return await _correct(api, f"{base}/{meta['name']}", desired, fill_only=fill_only)
        except errors.ApiError as exc:
            if exc.status != 409 or attempt == CONFLICT_RETRIES:
                raise
        await asyncio.sleep(0.05 * attempt)
        attempt += 1


async def _correct(api: client.Client, path: str, desired: dict[str, Any], *, fill_only: bool) -> str:
    meta = desired["metadata"]
    current = await api.request("GET", path)
    spec, want = current.get("spec") or {}, desired["spec"]
    if fill_only:
        patch_spec = {k: v for k, v in want.items() if k in OWNED_FIELDS and spec.get(k) in (None, {}, "")}
    else:
        patch_spec = {
            k: _merge_value(spec.get(k), want.get(k))
            for k in OWNED_FIELDS
            if spec.get(k) != want.get(k) and not (k == "queue" and want.get(k) is None)
        }
    refs = current["metadata"].get("ownerReferences") or []
    new_refs = [r for r in meta.get("ownerReferences") or [] if r["uid"] not in {x.get("uid") for x in refs}]
    if not patch_spec and not new_refs:
        return "unchanged"
    body: dict[str, Any] = {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]}}
    if patch_spec:
        body["spec"] = patch_spec
    if new_refs:
        has_controller = any(r.get("controller") for r in refs)
        body["metadata"]["ownerReferences"] = refs + [
            {**r, "controller": r.get("controller", False) and not has_controller} for r in new_refs
        ]
    await api.request("PATCH", path, body=body, content_type=client.MERGE)
    return "updated"
