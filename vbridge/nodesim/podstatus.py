"""Pod status bodies a kubelet would write. Pure: callers pass the time and the IP."""

from __future__ import annotations

from typing import Any

import vbridge.nodesim as nodesim

__all__ = ["exit_code", "finished", "run_seconds", "running"]


def run_seconds(pod: dict[str, Any], default: float | None) -> float | None:
    """How long the pod runs before it finishes, or None to run until deleted."""
    raw = (pod.get("metadata", {}).get("annotations") or {}).get(nodesim.RUN_SECONDS)
    if raw is None:
        return default
    try:
        return max(0.0, float(raw))
    except ValueError:
        return default


def exit_code(pod: dict[str, Any]) -> int:
    raw = (pod.get("metadata", {}).get("annotations") or {}).get(nodesim.EXIT_CODE, "0")
    try:
        return int(raw)
    except ValueError:
        return 1


def _conditions(now: str, ready: bool) -> list[dict[str, Any]]:
    flag = "True" if ready else "False"
    return [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
        {"type": "Initialized", "status": "True", "lastTransitionTime": now},
        {"type": "ContainersReady", "status": flag, "lastTransitionTime": now},
        {"type": "Ready", "status": flag, "lastTransitionTime": now},
    ]


def _container(c: dict[str, Any], state: dict[str, Any], *, ready: bool) -> dict[str, Any]:
    return {
        "name": c["name"],
        "image": c.get("image", ""),
        "imageID": f"sim://{c.get('image', '')}",
        "containerID": f"sim://{c['name']}",
        "ready": ready,
        "started": "running" in state,
        "restartCount": 0,
        "state": state,
    }


def running(pod: dict[str, Any], *, pod_ip: str, host_ip: str, now: str) -> dict[str, Any]:
    spec = pod.get("spec", {})
    status: dict[str, Any] = {
        "phase": "Running",
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "startTime": now,
        "conditions": _conditions(now, ready=True),
        "containerStatuses": [
            _container(c, {"running": {"startedAt": now}}, ready=True) for c in spec.get("containers", [])
        ],
    }
    if spec.get("initContainers"):
        done = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}}
        status["initContainerStatuses"] = [_container(c, done, ready=False) for c in spec["initContainers"]]
    return {"status": status}


def finished(pod: dict[str, Any], *, code: int, now: str) -> dict[str, Any]:
    spec = pod.get("spec", {})
    started = pod.get("status", {}).get("startTime", now)
    state = {
        "terminated": {
            "exitCode": code,
            "reason": "Completed" if code == 0 else "Error",
            "startedAt": started,
            "finishedAt": now,
        }
    }
    return {
        "status": {
            "phase": "Succeeded" if code == 0 else "Failed",
            "conditions": _conditions(now, ready=False),
            "containerStatuses": [_container(c, state, ready=False) for c in spec.get("containers", [])],
        }
    }
