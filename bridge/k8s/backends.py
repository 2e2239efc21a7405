"""Which backend places the pods: ``--backend`` resolved against the cluster.

``volcano`` and ``native`` are taken as said. ``auto`` is native only when the apiserver serves
``scheduling.k8s.io/v1beta1`` ``workloads`` and ``podgroups`` (the ``GenericWorkload`` gate and
the runtime-config are on), else volcano. Choosing ``auto`` (a flag or the chart's ``backend``
value) is how a user asks for native where it exists: the default stays ``volcano``
(``bridge.defaults.BACKEND``), so no cluster changes backend because it was upgraded.
"""

from __future__ import annotations

import logging
from typing import Literal

from bridge import defaults, errors
from bridge.k8s import client
from bridge.native import workloads as native_workloads

__all__ = ["Backend", "resolve", "served"]

log = logging.getLogger(__name__)
Backend = Literal["volcano", "native"]


async def served(api: client.Client) -> bool:
    """The Workload API's two kinds are served."""
    try:
        found = await api.request("GET", f"/apis/{native_workloads.API}")
    except errors.ApiError as exc:
        if exc.status in (403, 404):
            return False
        raise
    names = {r.get("name") for r in found.get("resources") or []}
    return {"workloads", "podgroups"} <= names


async def resolve(api: client.Client, choice: str) -> Backend:
    """``choice`` (one of ``defaults.BACKENDS``) as the backend to run."""
    if choice not in defaults.BACKENDS:
        raise errors.ConfigError(f"--backend must be one of {', '.join(defaults.BACKENDS)}, got {choice!r}")
    if choice == "volcano":
        return "volcano"
    if choice == "native":
        return "native"
    if await served(api):
        log.warning("backend auto: %s is served, gangs go to kube-scheduler (native)", native_workloads.API)
        return "native"
    log.warning("backend auto: %s is not served, gangs go to the volcano scheduler", native_workloads.API)
    return "volcano"
