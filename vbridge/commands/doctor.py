"""``vbridge doctor``: check a cluster before and after installing volcano-bridge. The I/O side.

One line per check (OK / WARN / FAIL and what to do), or ``-o json``; exit 0 when no check
failed, 1 otherwise. Each check reads what it needs (GETs, shared between checks, and one
server-side dry-run create) and hands it to its verdict in :mod:`vbridge.commands.doctor_checks`;
a check that cannot read something fails with the reason, the others still run.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import json
from collections.abc import Awaitable, Callable
from typing import Any

from bridge import defaults, errors
from bridge.k8s import client, kubeconfigs, paths
from vbridge.commands import connecting, interrupts
from vbridge.commands import doctor_checks as checks
from webhooks import configuration

__all__ = [
    "CERT_MANAGER_CRD",
    "COMPONENTS",
    "CRD_PATH",
    "PROBE",
    "SPARK_CRD",
    "Cluster",
    "Doctor",
    "Options",
    "add_parser",
    "diagnose",
    "main",
    "render",
]

COMPONENTS = ("webhook", "controllers", "scheduler")
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
CERT_MANAGER_CRD = "certificates.cert-manager.io"
SPARK_CRD = "sparkapplications.sparkoperator.k8s.io"
PROBE = "vbridge-doctor-probe"


@dataclasses.dataclass(frozen=True)
class Options:
    namespace: str = configuration.NAME  # where the chart was (or will be) installed
    release: str = configuration.NAME  # the Helm release: names the Deployments, ConfigMap and webhook config
    scheduler_name: str = defaults.SCHEDULER_NAME
    probe_namespace: str = "default"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "doctor",
        help="check a cluster before and after installing volcano-bridge",
        description="One OK/WARN/FAIL line per check; exit 1 on any FAIL.",
        epilog="examples:\n  vbridge doctor                       # before helm install, and after\n"
        "  vbridge doctor -n volcano-bridge -o json\n",
    )
    connecting.add_arguments(p)
    p.add_argument("-n", "--namespace", default=Options.namespace, help="the release's namespace")
    p.add_argument("--release", default=Options.release, help="the Helm release name")
    p.add_argument("--scheduler-name", default=Options.scheduler_name, help="the chart's schedulerName")
    p.add_argument(
        "--probe-namespace", default=Options.probe_namespace, help="namespace of the dry-run create (nothing is made)"
    )
    p.add_argument("-o", "--output", choices=("text", "json"), default="text", help="text or json")
    p.set_defaults(func=main)
    return p


class Cluster:
    """GETs, each made once however many checks ask for it; a 404 is None (or an empty list)."""

    def __init__(self, api: client.Client) -> None:
        self.api = api
        self._memo: dict[str, asyncio.Task[dict[str, Any] | None]] = {}

    async def get(self, path: str, **params: Any) -> dict[str, Any] | None:
        key = path + "?" + json.dumps(params, sort_keys=True)
        if key not in self._memo:
            self._memo[key] = asyncio.ensure_future(self._get(path, params))
        return await self._memo[key]

    async def _get(self, path: str, params: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return await self.api.request("GET", path, params=params or None)
        except errors.ApiError as exc:
            if exc.status == 404:
                return None
            raise

    async def items(self, path: str, **params: Any) -> list[dict[str, Any]]:
        return list(((await self.get(path, **params)) or {}).get("items") or [])

    async def crd(self, name: str) -> dict[str, Any] | None:
        return await self.get(CRD_PATH + name)


class Doctor:
    """The checks, each an async method returning one Check; shared reads go through ``Cluster``."""

    def __init__(self, api: client.Client, opts: Options, now: Callable[[], datetime.datetime]) -> None:
        self.api, self.opts, self.now = api, opts, now
        self.cluster = Cluster(api)

    async def ours(self) -> dict[str, dict[str, Any] | None]:
        ns, rel = self.opts.namespace, self.opts.release
        wanted = [paths.resource("apps/v1", "deployments", namespace=ns, name=f"{rel}-{c}") for c in COMPONENTS]
        found = await asyncio.gather(*(self.cluster.get(path) for path in wanted))
        return dict(zip(COMPONENTS, found, strict=True))

    async def webhook_config(self) -> dict[str, Any] | None:
        return await self.cluster.get(
            paths.resource("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations", name=self.opts.release)
        )

    async def found_volcano(self) -> checks.Volcano:
        return checks.find_volcano(await self.cluster.items(paths.resource("apps/v1", "deployments")))

    async def installed(self) -> bool:
        return await self.webhook_config() is not None or any((await self.ours()).values())

    async def external(self) -> bool:
        """Beside Volcano: its scheduler places the groups and we run none."""
        return (await self.found_volcano()).scheduler and (await self.ours())["scheduler"] is None

    async def crds(self) -> checks.Check:
        names = list(checks.CRDS)
        found = await asyncio.gather(*(self.cluster.crd(n) for n in names))
        return checks.crds(dict(zip(names, found, strict=True)))

    async def volcano(self) -> checks.Check:
        return checks.volcano(await self.found_volcano(), await self.ours(), self.opts.scheduler_name)

    async def cert_manager(self) -> checks.Check:
        return checks.cert_manager(await self.cluster.crd(CERT_MANAGER_CRD), await self.webhook_config())

    async def operators(self) -> checks.Check:
        deployments = await self.cluster.items(paths.resource("apps/v1", "deployments"))
        verdict = checks.operators(deployments)
        if verdict.verdict == checks.OK or await self.cluster.crd(SPARK_CRD) is None:
            return verdict
        apps = await self.cluster.items(paths.resource("sparkoperator.k8s.io/v1beta2", "sparkapplications"))
        return checks.operators(deployments, sum(1 for a in apps if (a.get("spec") or {}).get("batchScheduler")))

    async def components(self) -> checks.Check:
        return checks.components(await self.ours(), external=await self.external(), namespace=self.opts.namespace)

    async def webhook(self) -> checks.Check:
        config = await self.webhook_config()
        hooks = (config or {}).get("webhooks") or [{}]
        svc = (hooks[0].get("clientConfig") or {}).get("service")
        slices = None
        if svc:
            slices = await self.cluster.items(
                paths.resource("discovery.k8s.io/v1", "endpointslices", namespace=svc.get("namespace", "")),
                labelSelector=f"kubernetes.io/service-name={svc.get('name', '')}",
            )
        return checks.webhook(config, slices, self.opts.release)

    async def dry_run(self) -> checks.Check:
        config = await self.webhook_config()
        if config is None:
            return checks.Check("webhook-dry-run", checks.WARN, "skipped: the webhook is not registered")
        hooks = {h.get("name", "") for h in config.get("webhooks") or []}
        probe = None
        if any(h.startswith("tfjob.") for h in hooks) and await self.cluster.crd("tfjobs.kubeflow.org"):
            probe = ("TFJob", "kubeflow.org/v1", "tfjobs", _tfjob())
        elif any(h.startswith("job.batch.volcano.sh") for h in hooks) and await self.cluster.crd(
            "jobs.batch.volcano.sh"
        ):
            probe = ("Volcano Job", defaults.BATCH_API, "jobs", _vcjob())
        if probe is None:
            return checks.Check(
                "webhook-dry-run", checks.WARN, "skipped: neither the TFJob nor the Volcano Job CRD is installed"
            )
        kind, api_version, plural, body = probe
        path = paths.resource(api_version, plural, namespace=self.opts.probe_namespace)
        try:
            returned = await self.api.request("POST", path, body=body, params={"dryRun": "All"})
        except errors.ApiError as exc:
            return checks.dry_run(kind, None, exc)
        return checks.dry_run(kind, returned, None)

    async def leader(self) -> checks.Check:
        ns, name = self.opts.namespace, f"{self.opts.scheduler_name}-scheduler"
        lease = await self.cluster.get(paths.resource("coordination.k8s.io/v1", "leases", namespace=ns, name=name))
        where = f"{ns}/{name}"
        expected, external = await self.installed(), await self.external()
        return checks.leader(lease, self.now(), where=where, expected=expected, external=external)

    async def scheduler_conf(self) -> checks.Check:
        if await self.external():
            return checks.Check("scheduler-conf", checks.OK, "no scheduler of ours: Volcano's conf applies")
        ns = self.opts.namespace
        for suffix in ("scheduler-conf", "scheduler"):
            name = f"{self.opts.release}-{suffix}"
            cm = await self.cluster.get(paths.resource("v1", "configmaps", namespace=ns, name=name))
            if cm is not None:
                return checks.scheduler_conf(cm, where=f"ConfigMap {ns}/{name}", expected=True)
        expected = (await self.ours())["scheduler"] is not None
        return checks.scheduler_conf(None, where=f"{ns}/{self.opts.release}-scheduler-conf", expected=expected)

    def all(self) -> list[tuple[str, Callable[[], Awaitable[checks.Check]]]]:
        return [
            ("crds", self.crds),
            ("volcano", self.volcano),
            ("cert-manager", self.cert_manager),
            ("operators", self.operators),
            ("components", self.components),
            ("webhook", self.webhook),
            ("webhook-dry-run", self.dry_run),
            ("scheduler-leader", self.leader),
            ("scheduler-conf", self.scheduler_conf),
        ]


def _tfjob() -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "busybox"}
    worker = {"replicas": 1, "template": {"spec": {"containers": [container]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": PROBE},
        "spec": {"tfReplicaSpecs": {"Worker": worker}},
    }


def _vcjob() -> dict[str, Any]:
    task = {"replicas": 1, "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}
    return {"apiVersion": defaults.BATCH_API, "kind": "Job", "metadata": {"name": PROBE}, "spec": {"tasks": [task]}}


async def _guarded(name: str, check: Callable[[], Awaitable[checks.Check]]) -> checks.Check:
    try:
        return await check()
    except errors.ApiError as exc:
        fix = "your credentials may not read it: kubectl auth can-i --list" if exc.status in (401, 403) else ""
        return checks.Check(name, checks.FAIL, f"the apiserver answered {exc}", fix)
    except client.TRANSPORT_ERRORS as exc:
        return checks.Check(name, checks.FAIL, f"lost the apiserver: {type(exc).__name__}: {exc}")
    except Exception as exc:
        return checks.Check(name, checks.FAIL, f"check failed: {type(exc).__name__}: {exc}")


async def diagnose(
    conn: kubeconfigs.Connection, opts: Options, *, now: Callable[[], datetime.datetime] | None = None
) -> list[checks.Check]:
    """Every check, in order; the apiserver first, and nothing else when it cannot be reached."""
    clock = now or (lambda: datetime.datetime.now(datetime.UTC))
    async with client.Client(conn, timeout=10.0) as api:
        fix = "check --kubeconfig / --context and that the server is up"
        try:
            version = await api.request("GET", "/version")
        except errors.ApiError as exc:
            return [checks.Check("apiserver", checks.FAIL, f"{conn.server} answered {exc}", fix)]
        except client.TRANSPORT_ERRORS as exc:
            reason = f"{type(exc).__name__}: {exc}"
            return [checks.Check("apiserver", checks.FAIL, f"cannot reach {conn.server}: {reason}", fix)]
        doctor = Doctor(api, opts, clock)
        rest = await asyncio.gather(*(_guarded(name, check) for name, check in doctor.all()))
        return [checks.apiserver(version, conn.server), *rest]


def render(results: list[checks.Check]) -> str:
    width = max(len(c.name) for c in results)
    lines = [
        f"{c.verdict:<5} {c.name:<{width}}  {c.message}" + (f"  -> {c.fix}" if c.fix and c.verdict != "OK" else "")
        for c in results
    ]
    counts = {v: sum(1 for c in results if c.verdict == v) for v in (checks.OK, checks.WARN, checks.FAIL)}
    lines.append(", ".join(f"{n} {v}" for v, n in counts.items()))
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    opts = Options(
        namespace=args.namespace,
        release=args.release,
        scheduler_name=args.scheduler_name,
        probe_namespace=args.probe_namespace,
    )
    try:
        conn = connecting.connection(args)
        results = interrupts.run(diagnose(conn, opts))
    except errors.BridgeError as exc:  # no kubeconfig, a bad context: the first check fails
        results = [checks.Check("apiserver", checks.FAIL, str(exc), "pass --kubeconfig or set $KUBECONFIG")]
    failed = any(c.verdict == checks.FAIL for c in results)
    if args.output == "json":
        print(json.dumps({"ok": not failed, "checks": [dataclasses.asdict(c) for c in results]}, indent=2))
    else:
        print(render(results))
    return 1 if failed else 0
