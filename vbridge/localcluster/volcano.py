"""Volcano's own scheduler and controller manager as child processes, what our chart runs beside.

    with volcano.Volcano(lc) as vc:  # Volcano's CRDs applied; vc-scheduler and vc-controller-manager up
        ...

The binaries, Volcano's CRDs and the scheduler conf of Volcano's own Helm chart are what
``tools/build-volcano.sh`` builds from the pinned ``volcano.sh/volcano`` module into
``.cache/bin/volcano-<version>-<hash>/`` (:func:`find`). Both run out of cluster against a
``LocalCluster`` as Volcano's release runs them, with only what running outside a pod changes:

- each has a ServiceAccount token of its own (``operators.token_kubeconfig``: bound to
  cluster-admin, as Volcano's chart binds broad roles), so an audit log names who did what
  (``SCHEDULER_USER`` binds the pods);
- leader election off (one replica each), health and metrics ports on free loopback ports;
- the scheduler's conf is Volcano's chart default (``volcano-scheduler.conf``: enqueue, allocate,
  backfill; priority, gang, conformance; overcommit, drf, predicates, proportion, nodeorder,
  binpack), or the text given.

The scheduler creates the ``root`` and ``default`` Queues at start, its controller manager opens
them (``status.state: Open``). Volcano's admission webhooks are not run: nothing here needs them.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import time
from typing import Any

import yaml

from bridge import errors
from bridge.k8s import client, kubeconfigs
from vbridge.localcluster import binaries, cluster, operators, processes
from vbridge.localcluster import probes as http_probes

__all__ = [
    "CONF",
    "CONTROLLERS_ACCOUNT",
    "CONTROLLERS_USER",
    "SCHEDULER_ACCOUNT",
    "SCHEDULER_USER",
    "Volcano",
    "crds",
    "find",
]

CONF = "volcano-scheduler.conf"
SCHEDULER_ACCOUNT, CONTROLLERS_ACCOUNT = "volcano-scheduler", "volcano-controllers"
SCHEDULER_USER = f"system:serviceaccount:{operators.SYSTEM_NAMESPACE}:{SCHEDULER_ACCOUNT}"
CONTROLLERS_USER = f"system:serviceaccount:{operators.SYSTEM_NAMESPACE}:{CONTROLLERS_ACCOUNT}"


def find(*, build: bool = False) -> pathlib.Path:
    """The folder ``tools/build-volcano.sh`` built (building it when ``build``)."""
    root = binaries.repo_root()
    if root is None:
        raise errors.BinaryMissingError("volcano: not running from a volcano-bridge checkout")
    env = dict(os.environ)
    if not build:
        env["VBRIDGE_NO_BUILD"] = "1"
    script = root / "tools" / "build-volcano.sh"
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, check=False)
    for line in proc.stdout.splitlines():
        if line.startswith("volcano="):
            return pathlib.Path(line.split("=", 1)[1])
    tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
    raise errors.BinaryMissingError(f"Volcano is not built ({tail[0]}); run tools/build-volcano.sh")


def crds(folder: pathlib.Path) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted((folder / "crds").glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


class Volcano(processes.Started):
    """vc-scheduler and vc-controller-manager against ``lc``; ``stop`` is idempotent."""

    def __init__(
        self,
        lc: cluster.LocalCluster,
        *,
        folder: pathlib.Path | None = None,
        conf: str | None = None,
        scheduler_name: str = "volcano",
        start_timeout: float = 90.0,
    ) -> None:
        self.lc = lc
        self.folder = folder or find()
        self.conf = conf
        self.scheduler_name = scheduler_name
        self.start_timeout = start_timeout
        self.workdir = lc.workdir / "volcano"
        self.procs: list[processes.Process] = []
        self.health: list[str] = []

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)

        async def apply() -> None:
            async with client.Client(kubeconfigs.load(self.lc.kubeconfig)) as api:
                await cluster.apply_crds(api, crds(self.folder))

        cluster.run_sync(apply())
        conf = self.workdir / CONF
        conf.write_text(self.conf if self.conf is not None else (self.folder / CONF).read_text())
        try:
            self._run("vc-scheduler", SCHEDULER_ACCOUNT, f"--scheduler-conf={conf}", "--cache-dumper=false")
            self._run("vc-controller-manager", CONTROLLERS_ACCOUNT)
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _run(self, binary: str, account: str, *extra: str) -> None:
        kubeconfig = operators.token_kubeconfig(self.lc, self.workdir / f"{binary}.kubeconfig", account=account)
        health = f"127.0.0.1:{cluster.free_port()}"
        argv = [
            str(self.folder / binary),
            f"--kubeconfig={kubeconfig}",
            f"--scheduler-name={self.scheduler_name}",
            "--leader-elect=false",
            "--enable-healthz=true",
            f"--healthz-address={health}",
            f"--listen-address=127.0.0.1:{cluster.free_port()}",
            *extra,
            "-v=2",
        ]
        proc = processes.Process(binary, argv, log=self.workdir / f"{binary}.log")
        proc.start()
        self.procs.append(proc)
        self.health.append(f"http://{health}/healthz")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            for proc in self.procs:
                proc.check_alive()
            if all(map(http_probes.http_ok, self.health)):
                return
            time.sleep(0.2)
        tails = "\n".join(f"--- {p.name}\n{p.tail(20)}" for p in self.procs)
        raise errors.StartupError(f"Volcano not healthy within {self.start_timeout:.0f} s", log_tail=tails)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()
        self.procs.clear()

    def tail(self, lines: int = 30) -> str:
        return "\n".join(f"--- {p.name}\n{p.tail(lines)}" for p in self.procs)
