"""Installing the Helm chart on a test bed of its own (tests/integration/test_helm_install.py).

- ``BareCluster``: a LocalCluster as a user's cluster is before the install: none of our CRDs
  and no Queues (the chart brings them), and an apiserver audit log of every request our
  components' ServiceAccounts make (Metadata level: who, what, the response code);
- ``Helm``: the helm binary against that cluster, with its config, cache and data in the
  cluster's folder (nothing in ~);
- ``LogKeeper``: keeps the output of the chart's processes, which the node runtime deletes with
  the pod, by hard-linking each log file as soon as it appears (a hard link outlives the
  pod's folder and still gets what the process writes after);
- ``audit_events`` and ``forbidden``: the audit log read back, and its 403s.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import threading
from typing import Any

from bridge.k8s import kubeconfigs
from vbridge.localcluster import cluster

__all__ = ["BareCluster", "Helm", "LogKeeper", "audit_events", "forbidden"]


class BareCluster(cluster.LocalCluster):
    """No CRDs, no Queues; the apiserver audits the ServiceAccounts of ``audited`` namespaces."""

    def __init__(self, *args: Any, audited: tuple[str, ...] = (), **kwargs: Any) -> None:
        rules: tuple[dict[str, Any], ...] = ()
        if audited:
            groups = [f"system:serviceaccounts:{ns}" for ns in audited]
            rules = ({"level": "Metadata", "userGroups": groups}, {"level": "None"})
        super().__init__(*args, endpoint_routing=True, audit_rules=rules, **kwargs)
        self.audited = audited

    async def _bootstrap(self, conn: kubeconfigs.Connection) -> None:
        return None


def audit_events(lc: BareCluster) -> list[dict[str, Any]]:
    if not lc.audit_log.exists():
        return []
    return [json.loads(line) for line in lc.audit_log.read_text().splitlines() if line.strip()]


def forbidden(events: list[dict[str, Any]]) -> list[str]:
    """One line per request answered 403: who, verb, what."""
    out = []
    for e in events:
        if (e.get("responseStatus") or {}).get("code") == 403:
            ref = e.get("objectRef") or {}
            what = "/".join(x for x in (ref.get("namespace"), ref.get("resource"), ref.get("subresource")) if x)
            out.append(f"{e['user']['username']} {e['verb']} {what or e.get('requestURI')}")
    return out


class Helm:
    def __init__(self, binary: pathlib.Path, lc: cluster.LocalCluster) -> None:
        self.binary, self.lc = binary, lc
        home = lc.workdir / "helm"
        self.env = {
            **os.environ,
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_DATA_HOME": str(home / "data"),
        }

    def __call__(self, *args: str, timeout: float = 300) -> str:
        out = subprocess.run(
            [str(self.binary), f"--kubeconfig={self.lc.kubeconfig}", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=timeout,
            check=False,
        )
        assert out.returncode == 0, f"helm {' '.join(args)}: {out.stderr}{out.stdout}"
        return out.stdout


class LogKeeper:
    """Hard-links every ``pods/<ns>_<pod>_<uid>/containers/<name>/logs/*.log`` under ``workdir`` into ``keep``."""

    def __init__(self, workdir: pathlib.Path, keep: pathlib.Path, period: float = 0.2) -> None:
        self.workdir, self.keep, self.period = workdir, keep, period
        self.keep.mkdir(parents=True, exist_ok=True)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="log-keeper", daemon=True)

    def start(self) -> LogKeeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sweep()

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.sweep()

    def sweep(self) -> None:
        pods = self.workdir / "pods"
        if not pods.is_dir():
            return
        for log in pods.glob("*/containers/*/logs/*.log"):
            rel = log.relative_to(pods)
            target = self.keep / "__".join(rel.parts)
            if not target.exists():
                try:
                    os.link(log, target)
                except OSError:  # gone between glob and link, or already linked
                    continue

    def logs(self) -> dict[str, str]:
        self.sweep()
        return {p.name: p.read_text(errors="replace") for p in sorted(self.keep.glob("*.log"))}
