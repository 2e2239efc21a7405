"""Node bodies for simulated nodes. Pure."""

from __future__ import annotations

import dataclasses
from typing import Any

import vbridge.nodesim as nodesim

__all__ = ["NodeSpec", "node_body", "node_status", "pool"]


@dataclasses.dataclass(frozen=True)
class NodeSpec:
    name: str
    cpu: str = "32"
    memory: str = "128Gi"
    pods: int = 110
    gpus: int = 0
    labels: tuple[tuple[str, str], ...] = ()
    taints: tuple[tuple[str, str, str], ...] = ()  # (key, value, effect)
    unschedulable: bool = False


def pool(count: int, *, prefix: str = "sim-node", **kwargs: Any) -> list[NodeSpec]:
    """``count`` identical nodes named ``<prefix>-0`` … ``<prefix>-<count-1>``."""
    return [NodeSpec(name=f"{prefix}-{i}", **kwargs) for i in range(count)]


def node_body(spec: NodeSpec) -> dict[str, Any]:
    labels = {
        "kubernetes.io/hostname": spec.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "simulated",
        nodesim.SIMULATED_LABEL: "true",
        **dict(spec.labels),
    }
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": spec.name, "labels": labels},
        "spec": {},
    }
    if spec.taints:
        body["spec"]["taints"] = [{"key": k, "value": v, "effect": e} for k, v, e in spec.taints]
    if spec.unschedulable:
        body["spec"]["unschedulable"] = True
    return body


def node_status(spec: NodeSpec, *, address: str, now: str) -> dict[str, Any]:
    capacity = {"cpu": spec.cpu, "memory": spec.memory, "pods": str(spec.pods), "ephemeral-storage": "1Ti"}
    if spec.gpus:
        capacity["nvidia.com/gpu"] = str(spec.gpus)
    conditions = [
        {
            "type": t,
            "status": "False",
            "reason": f"KubeletHas{r}",
            "message": "simulated",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
        for t, r in (
            ("MemoryPressure", "SufficientMemory"),
            ("DiskPressure", "NoDiskPressure"),
            ("PIDPressure", "SufficientPID"),
        )
    ]
    conditions.append(
        {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "simulated",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
    )
    return {
        "status": {
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": spec.name}],
            "nodeInfo": {
                "architecture": "amd64",
                "operatingSystem": "linux",
                "kubeletVersion": "v1.37.2-sim",
                "kubeProxyVersion": "",
                "containerRuntimeVersion": "sim://1",
                "osImage": "volcano-bridge simulated",
                "kernelVersion": "",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
            "phase": "Running",
        }
    }
