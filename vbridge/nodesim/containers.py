"""A container's argv, restart decisions, probe bookkeeping and status bodies. Pure.

The I/O side (``runtime``, ``procs``) feeds results in and writes what these return.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from vbridge.nodesim import envvars

__all__ = [
    "ContainerStatus",
    "Probe",
    "Tracker",
    "argv",
    "backoff",
    "localize",
    "pod_status",
    "probe",
    "should_restart",
]


def argv(
    container: Mapping[str, Any], *, entrypoint: Sequence[str], cmd: Sequence[str], env: Mapping[str, str]
) -> list[str]:
    """``command`` (else the image's ENTRYPOINT) + ``args`` (else, without ``command``, its CMD), expanded."""
    command = container.get("command")
    args = container.get("args")
    words = list(command) + list(args or []) if command else list(entrypoint) + list(args if args is not None else cmd)
    return [envvars.expand(str(w), env) for w in words]


def localize(words: Sequence[str], programs: Mapping[str, str]) -> list[str]:
    """argv[0] mapped to a local program by its base name (``vbridge`` → the virtualenv's)."""
    if not words:
        return []
    local = programs.get(posixpath.basename(words[0]))
    return [local or words[0], *words[1:]]


def should_restart(policy: str, exit_code: int) -> bool:
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def backoff(restarts: int, *, first: float, most: float) -> float:
    """Seconds before restart number ``restarts`` (1-based): the first at once, then doubling."""
    if restarts <= 1:
        return 0.0
    return float(min(first * 2 ** (restarts - 2), most))


@dataclasses.dataclass(frozen=True)
class Probe:
    kind: str  # "http" | "tcp"
    port: int
    path: str = "/"
    scheme: str = "HTTP"
    initial_delay: float = 0.0
    period: float = 10.0
    timeout: float = 1.0
    success_threshold: int = 1
    failure_threshold: int = 3


def _port(value: Any, container: Mapping[str, Any]) -> int:
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    for port in container.get("ports") or []:
        if port.get("name") == value:
            return int(port["containerPort"])
    raise ValueError(f"port {value!r} not declared by container {container.get('name')!r}")


def probe(spec: Mapping[str, Any] | None, container: Mapping[str, Any]) -> Probe | None:
    """A readiness or liveness probe of the pod spec; None when absent or of a kind we do not run (exec, grpc)."""
    if not spec:
        return None
    if "httpGet" in spec:
        get = spec["httpGet"]
        kind, port, path, scheme = "http", get["port"], get.get("path", "/"), get.get("scheme", "HTTP").upper()
    elif "tcpSocket" in spec:
        kind, port, path, scheme = "tcp", spec["tcpSocket"]["port"], "", ""
    else:
        return None
    return Probe(
        kind,
        _port(port, container),
        path,
        scheme,
        initial_delay=float(spec.get("initialDelaySeconds", 0)),
        period=float(spec.get("periodSeconds", 10)),
        timeout=float(spec.get("timeoutSeconds", 1)),
        success_threshold=int(spec.get("successThreshold", 1)),
        failure_threshold=int(spec.get("failureThreshold", 3)),
    )


@dataclasses.dataclass
class Tracker:
    """Consecutive results against the thresholds; ``ok`` starts False for readiness, True for liveness."""

    probe: Probe
    ok: bool
    successes: int = 0
    failures: int = 0

    def observe(self, success: bool) -> bool:
        """Record one result; True when ``ok`` flipped."""
        if success:
            self.successes, self.failures = self.successes + 1, 0
            if not self.ok and self.successes >= self.probe.success_threshold:
                self.ok = True
                return True
        else:
            self.successes, self.failures = 0, self.failures + 1
            if self.ok and self.failures >= self.probe.failure_threshold:
                self.ok = False
                return True
        return False


@dataclasses.dataclass
class ContainerStatus:
    name: str
    image: str
    state: dict[str, Any] = dataclasses.field(default_factory=lambda: {"waiting": {"reason": "ContainerCreating"}})
    last: dict[str, Any] | None = None
    restarts: int = 0
    ready: bool = False
    final: bool = False  # terminated and not to be restarted

    def running(self, now: str) -> None:
        self.state, self.final = {"running": {"startedAt": now}}, False

    def terminated(self, code: int, now: str, *, final: bool, reason: str = "") -> None:
        started = self.state.get("running", {}).get("startedAt", now)
        why = reason or ("Completed" if code == 0 else "Error")
        self.state = {"terminated": {"exitCode": code, "reason": why, "startedAt": started, "finishedAt": now}}
        self.ready, self.final = False, final

    def waiting(self, reason: str, message: str = "") -> None:
        if "terminated" in self.state:
            self.last = self.state
        self.state = {"waiting": {"reason": reason, **({"message": message} if message else {})}}
        self.ready = False

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "image": self.image,
            "imageID": f"sim://{self.image}",
            "containerID": f"sim://{self.name}/{self.restarts}",
            "ready": self.ready,
            "started": "running" in self.state,
            "restartCount": self.restarts,
            "state": self.state,
        }
        if self.last:
            out["lastState"] = self.last
        return out


def _phase(statuses: Sequence[ContainerStatus]) -> str:
    if statuses and all(s.final for s in statuses):
        return "Succeeded" if all(s.state["terminated"]["exitCode"] == 0 for s in statuses) else "Failed"
    if any("running" in s.state or s.restarts or "terminated" in s.state for s in statuses):
        return "Running"
    return "Pending"


def pod_status(
    statuses: Sequence[ContainerStatus], *, pod_ip: str, host_ip: str, start_time: str, now: str
) -> dict[str, Any]:
    phase = _phase(statuses)
    ready = "True" if statuses and all(s.ready for s in statuses) else "False"
    conditions = [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Initialized", "status": "True"},
        {"type": "ContainersReady", "status": ready},
        {"type": "Ready", "status": ready},
    ]
    for c in conditions:
        c["lastTransitionTime"] = now
    return {
        "status": {
            "phase": phase,
            "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}],
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "startTime": start_time,
            "conditions": conditions,
            "containerStatuses": [s.body() for s in statuses],
        }
    }
