"""The owner of what our components make at run time: the ServiceAccount they run as.

The Leases and the self-managed certificate Secret are made by the running components, not by
Helm. Owned by the component's ServiceAccount (which the chart makes), the garbage collector
removes them when that ServiceAccount goes with ``helm uninstall``, and also removes one that a
replica still shutting down recreates after it went (an object whose owner is gone is
collected as well). The account and its uid come from the pod's own token (its
``kubernetes.io`` claims, or a legacy token's ``kubernetes.io/serviceaccount/*`` claims): no
request, no extra rights. The signature is not checked here: the apiserver checks it on every
request, and a token that does not parse simply yields no owner.

An owner reference must name an object of the same namespace, so :meth:`Owner.reference` gives
none for another namespace. Pure.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from typing import Any

__all__ = ["Owner", "adopt", "from_token"]

_LEGACY = "kubernetes.io/serviceaccount/"


@dataclasses.dataclass(frozen=True)
class Owner:
    namespace: str
    name: str
    uid: str

    def reference(self, namespace: str) -> dict[str, Any] | None:
        """The ownerReference for an object in ``namespace``; None where it cannot be owned."""
        if namespace != self.namespace:
            return None
        return {"apiVersion": "v1", "kind": "ServiceAccount", "name": self.name, "uid": self.uid}


def from_token(token: str | None) -> Owner | None:
    """The ServiceAccount a service-account token names, or None for any other credential."""
    parts = (token or "").split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError):
        return None
    if not isinstance(claims, dict):
        return None
    bound = claims.get("kubernetes.io")
    if isinstance(bound, dict) and isinstance(bound.get("serviceaccount"), dict):
        sa = bound["serviceaccount"]
        found = [bound.get("namespace"), sa.get("name"), sa.get("uid")]
    else:
        found = [claims.get(_LEGACY + k) for k in ("namespace", "service-account.name", "service-account.uid")]
    namespace, name, uid = (v if isinstance(v, str) else "" for v in found)
    if not (namespace and name and uid):
        return None
    return Owner(namespace, name, uid)


def adopt(metadata: dict[str, Any], reference: dict[str, Any] | None) -> dict[str, Any]:
    """``metadata`` with ``reference`` among its ownerReferences (once; by uid)."""
    if reference is None:
        return metadata
    refs = list(metadata.get("ownerReferences") or [])
    if any(r.get("uid") == reference["uid"] for r in refs):
        return metadata
    return {**metadata, "ownerReferences": [*refs, reference]}
