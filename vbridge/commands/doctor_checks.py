"""The verdicts of ``vbridge doctor``: observed API objects in, one :class:`Check` out. Pure.

``vbridge.commands.doctor`` reads the cluster and hands each function here what it found (an
object, ``None`` for a 404, a list); nothing here does I/O, so every verdict is tested from
objects alone (``tests/vbridge/commands/test_doctor.py``).
"""

from __future__ import annotations

import dataclasses
import datetime
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bridge import errors
from scheduler import configure

__all__ = [
    "CRDS",
    "FAIL",
    "MIN_MINOR",
    "OK",
    "OUR_CRD_LABEL",
    "RECOMMENDED_MINOR",
    "VOLCANO_ROLES",
    "WARN",
    "Check",
    "Volcano",
    "apiserver",
    "cert_manager",
    "components",
    "crds",
    "deployment_args",
    "dry_run",
    "find_volcano",
    "leader",
    "operators",
    "scheduler_conf",
    "volcano",
    "webhook",
]

OK, WARN, FAIL = "OK", "WARN", "FAIL"
# CRD name -> the version our code reads and writes.
CRDS = {
    "podgroups.scheduling.volcano.sh": "v1beta1",
    "queues.scheduling.volcano.sh": "v1beta1",
    "jobs.batch.volcano.sh": "v1alpha1",
}
OUR_CRD_LABEL = ("app.kubernetes.io/part-of", "volcano-bridge")
# Volcano's Deployments, by the names of its installer (vc-*) and of its Helm chart, and by label.
VOLCANO_ROLES = {
    "scheduler": ({"vc-scheduler", "volcano-scheduler"}, "volcano-scheduler"),
    "controllers": ({"vc-controller-manager", "volcano-controllers"}, "volcano-controller"),
    "webhook": ({"vc-webhook-manager", "volcano-admission"}, "volcano-admission"),
}
MIN_MINOR, RECOMMENDED_MINOR = 27, 30  # scheduling gates beta (on) / GA with webhook matchConditions


@dataclasses.dataclass(frozen=True)
class Check:
    name: str
    verdict: str  # OK, WARN or FAIL
    message: str
    fix: str = ""


@dataclasses.dataclass(frozen=True)
class Volcano:
    """What of an existing Volcano runs: role -> "namespace/deployment", and its scheduler names."""

    components: Mapping[str, str]
    scheduler_names: tuple[str, ...] = ()

    @property
    def scheduler(self) -> bool:
        return "scheduler" in self.components


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _ref(obj: Mapping[str, Any]) -> str:
    return f"{_meta(obj).get('namespace', '')}/{_meta(obj).get('name', '')}"


def deployment_args(deploy: Mapping[str, Any]) -> list[str]:
    """Every container's command and args, flattened (flags are read from both)."""
    spec = ((deploy.get("spec") or {}).get("template") or {}).get("spec") or {}
    out: list[str] = []
    for c in spec.get("containers") or []:
        out += [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
    return out


def _flag(args: Sequence[str], name: str) -> list[str]:
    """Values of ``--name=V`` / ``--name V``; a bare ``--name`` (boolean) yields ``"true"``."""
    values = []
    for i, arg in enumerate(args):
        if arg.startswith(name + "="):
            values.append(arg.split("=", 1)[1])
        elif arg == name:
            following = args[i + 1] if i + 1 < len(args) else ""
            values.append(following if following and not following.startswith("-") else "true")
    return values


def _ours(obj: Mapping[str, Any]) -> bool:
    return (_meta(obj).get("labels") or {}).get("app.kubernetes.io/name") == "volcano-bridge"


def apiserver(version: Mapping[str, Any], server: str) -> Check:
    git = str(version.get("gitVersion", "?"))
    minor = int(re.sub(r"\D.*", "", str(version.get("minor", "0"))) or 0)
    text = f"reachable at {server}: Kubernetes {git}"
    if minor < MIN_MINOR:
        return Check("apiserver", FAIL, text, f"Kubernetes 1.{MIN_MINOR}+ is needed (pod scheduling gates)")
    if minor < RECOMMENDED_MINOR:
        return Check("apiserver", WARN, text, f"1.{RECOMMENDED_MINOR}+ recommended (GA scheduling gates)")
    return Check("apiserver", OK, text)


def crds(found: Mapping[str, Mapping[str, Any] | None]) -> Check:
    """``found``: CRD name -> the CRD or None (absent)."""
    missing = [n for n in CRDS if found.get(n) is None]
    if len(missing) == len(CRDS):
        return Check("crds", WARN, "none installed", "the chart installs them (volcano.external=true uses Volcano's)")
    if missing:
        return Check("crds", FAIL, f"missing: {', '.join(missing)}", "helm upgrade the release to install them")
    owners, unserved = set(), []
    for name in CRDS:
        crd = found.get(name) or {}
        labels = _meta(crd).get("labels") or {}
        owners.add("ours" if labels.get(OUR_CRD_LABEL[0]) == OUR_CRD_LABEL[1] else "Volcano's")
        served = {v.get("name") for v in (crd.get("spec") or {}).get("versions") or [] if v.get("served")}
        if CRDS[name] not in served:
            unserved.append(f"{name} does not serve {CRDS[name]}")
    if unserved:
        return Check("crds", FAIL, "; ".join(unserved), "install a Volcano release that serves these versions")
    return Check("crds", OK, f"present ({' and '.join(sorted(owners))}): {', '.join(CRDS)}")


def find_volcano(deployments: Iterable[Mapping[str, Any]]) -> Volcano:
    comps: dict[str, str] = {}
    names: list[str] = []
    for d in deployments:
        if _ours(d):
            continue
        name, app = _meta(d).get("name"), (_meta(d).get("labels") or {}).get("app")
        for role, (names_of_role, label) in VOLCANO_ROLES.items():
            if name in names_of_role or app == label:
                comps.setdefault(role, _ref(d))
                if role == "scheduler":
                    names += _flag(deployment_args(d), "--scheduler-name") or ["volcano"]
    return Volcano(comps, tuple(dict.fromkeys(names)))


def volcano(found: Volcano, ours: Mapping[str, Mapping[str, Any] | None], scheduler_name: str) -> Check:
    """An existing Volcano beside our Deployments (``ours``: component -> Deployment or None)."""
    if not found.components:
        return Check("volcano", OK, "no Volcano running: volcano-bridge runs standalone (the default values)")
    listed = ", ".join(f"{role} {ref}" for role, ref in sorted(found.components.items()))
    if found.scheduler:
        listed += f" (schedulerName {', '.join(found.scheduler_names)})"
    if found.scheduler and ours.get("scheduler") and scheduler_name in found.scheduler_names:
        return Check(
            "volcano",
            FAIL,
            f"Volcano runs ({listed}) and our scheduler serves the same schedulerName {scheduler_name!r}",
            "stop vc-scheduler, or reinstall with volcano.external=true (docs/migrating-from-volcano.md)",
        )
    controllers = ours.get("controllers")
    if "controllers" in found.components and controllers and "--no-vcjobs" not in deployment_args(controllers):
        return Check(
            "volcano",
            FAIL,
            f"Volcano runs ({listed}) and our controllers also run Volcano Jobs: each Job would get pods twice",
            "stop vc-controller-manager, or reinstall with volcano.external=true",
        )
    if not any(ours.values()):
        return Check(
            "volcano",
            WARN,
            f"Volcano runs: {listed}",
            "install with --set volcano.external=true, or turn its scheduler and controllers off first "
            "(docs/migrating-from-volcano.md)",
        )
    return Check("volcano", OK, f"beside Volcano: {listed}")


def cert_manager(crd: Mapping[str, Any] | None, config: Mapping[str, Any] | None) -> Check:
    wants = bool(config and "cert-manager.io/inject-ca-from" in (_meta(config).get("annotations") or {}))
    if crd is not None:
        return Check("cert-manager", OK, "present: certificates.mode=cert-manager is available")
    if wants:
        return Check(
            "cert-manager",
            FAIL,
            "the webhook configuration asks cert-manager for its CA, but cert-manager is not installed",
            "install cert-manager, or helm upgrade with certificates.mode=self",
        )
    return Check("cert-manager", OK, "not installed: use certificates.mode=self (the default) or secret")


def operators(deployments: Iterable[Mapping[str, Any]], spark_apps_with_batch_scheduler: int = 0) -> Check:
    """Operators started with their own gang scheduling: two writers of the same PodGroup."""
    found = []
    for d in deployments:
        args = deployment_args(d)
        on = [f"--enable-batch-scheduler={v}" for v in _flag(args, "--enable-batch-scheduler") if v != "false"]
        on += [f"--gang-scheduler-name={v}" for v in _flag(args, "--gang-scheduler-name") if v]
        on += [f"--enable-gang-scheduling={v}" for v in _flag(args, "--enable-gang-scheduling") if v != "false"]
        on += [f"--gang-scheduling={v}" for v in _flag(args, "--gang-scheduling") if v and v != "none"]
        if on:
            found.append(f"{_ref(d)} ({' '.join(on)})")
    if not found:
        return Check("operators", OK, "no operator runs with its own gang scheduling")
    apps = (
        f"; {spark_apps_with_batch_scheduler} SparkApplication(s) set spec.batchScheduler"
        if spark_apps_with_batch_scheduler
        else ""
    )
    return Check(
        "operators",
        WARN,
        f"gang flags on: {'; '.join(found)}: the operator writes the same PodGroups as the bridge{apps}",
        "remove those flags (docs/migrating-from-volcano.md#the-operators-own-gang-flags)",
    )


def components(ours: Mapping[str, Mapping[str, Any] | None], *, external: bool, namespace: str) -> Check:
    """Our Deployments (component -> Deployment or None) and whether all their replicas are ready."""
    if not any(ours.values()):
        return Check("components", WARN, f"no volcano-bridge Deployments in namespace {namespace}", "helm install")
    wanted = [c for c in ours if not (external and c == "scheduler")]
    missing = [c for c in wanted if ours.get(c) is None]
    unready = []
    for d in ours.values():
        if d is None:
            continue
        want = int((d.get("spec") or {}).get("replicas", 1))
        ready = int((d.get("status") or {}).get("readyReplicas") or 0)
        if ready < want or want == 0:
            unready.append(f"{_meta(d).get('name')} {ready}/{want} ready")
    if missing or unready:
        problems = [f"missing: {', '.join(missing)}"] if missing else []
        return Check(
            "components",
            FAIL,
            "; ".join(problems + unready),
            f"kubectl -n {namespace} get pods; kubectl -n {namespace} describe deploy",
        )
    return Check("components", OK, ", ".join(f"{_meta(d).get('name')} ready" for d in ours.values() if d))


def webhook(config: Mapping[str, Any] | None, slices: Sequence[Mapping[str, Any]] | None, name: str) -> Check:
    """The MutatingWebhookConfiguration and the endpoints of its Service (``slices``: its EndpointSlices)."""
    if config is None:
        return Check("webhook", WARN, f"MutatingWebhookConfiguration {name} not registered", "helm install")
    hooks = config.get("webhooks") or []
    if not hooks:
        return Check("webhook", FAIL, f"{name} lists no webhooks", "helm upgrade the release")
    empty = [h.get("name", "?") for h in hooks if not (h.get("clientConfig") or {}).get("caBundle")]
    if empty:
        return Check(
            "webhook",
            FAIL,
            f"{len(empty)} of {len(hooks)} webhooks have an empty caBundle (the apiserver cannot trust the server)",
            "certificates.mode=self: the controllers' leader injects it, see its logs; cert-manager: check the "
            "Certificate and cainjector; secret: set certificates.caBundle",
        )
    client_config = hooks[0].get("clientConfig") or {}
    if "service" not in client_config:
        url = urllib.parse.urlsplit(str(client_config.get("url", "")))
        return Check("webhook", OK, f"{len(hooks)} webhooks registered by URL {url.scheme}://{url.netloc}")
    svc = client_config["service"]
    where = f"service {svc.get('namespace')}/{svc.get('name')}"
    ready = sum(
        1
        for s in slices or []
        for e in s.get("endpoints") or []
        if (e.get("conditions") or {}).get("ready", True) is not False
    )
    if not ready:
        return Check(
            "webhook",
            FAIL,
            f"{len(hooks)} webhooks registered, but {where} has no ready endpoints",
            f"kubectl -n {svc.get('namespace')} get pods; kubectl -n {svc.get('namespace')} logs deploy/"
            f"{svc.get('name')}",
        )
    return Check("webhook", OK, f"{len(hooks)} webhooks registered, caBundle set, {where}: {ready} ready endpoint(s)")


def dry_run(kind: str, returned: Mapping[str, Any] | None, error: errors.ApiError | None) -> Check:
    """A server-side dry-run create of a probe ``kind``: the object the apiserver returned, or its error."""
    if error is not None:
        if error.status in (400, 403) and "denied the request" in error.message:
            return Check(
                "webhook-dry-run",
                WARN,
                f"the webhook answered but denied the probe {kind}: {error.message}",
                "see docs/troubleshooting.md#admission-denials",
            )
        return Check(
            "webhook-dry-run",
            FAIL,
            f"dry-run create of a {kind} failed: {error}",
            "the apiserver cannot call the webhook: check its Service, pods and certificate",
        )
    if returned is not None and _mutated(kind, returned):
        return Check("webhook-dry-run", OK, f"a dry-run {kind} came back mutated (the webhook is called)")
    return Check(
        "webhook-dry-run",
        FAIL,
        f"a dry-run {kind} came back unchanged: the webhook was not called",
        "check the namespaceSelector of the webhook configuration and the probe namespace",
    )


def _mutated(kind: str, obj: Mapping[str, Any]) -> bool:
    spec = obj.get("spec") or {}
    if kind == "TFJob":
        template = ((spec.get("tfReplicaSpecs") or {}).get("Worker") or {}).get("template") or {}
        return "scheduling.k8s.io/group-name" in ((template.get("metadata") or {}).get("annotations") or {})
    tasks = spec.get("tasks") or [{}]
    return tasks[0].get("name") == "default0" and spec.get("minAvailable") is not None


def _time(value: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))


def leader(
    lease: Mapping[str, Any] | None, now: datetime.datetime, *, where: str, expected: bool, external: bool
) -> Check:
    """The scheduler's Lease; ``expected``: volcano-bridge is installed; ``external``: Volcano schedules."""
    if lease is None:
        if external:
            return Check("scheduler-leader", OK, "no scheduler of ours: Volcano's vc-scheduler places the groups")
        verdict = FAIL if expected else WARN
        return Check(
            "scheduler-leader",
            verdict,
            f"no Lease {where}: no scheduler is running with --leader-elect, so no PodGroup gets scheduled",
            "kubectl -n <namespace> get pods; kubectl -n <namespace> logs deploy/<release>-scheduler",
        )
    spec = lease.get("spec") or {}
    holder = spec.get("holderIdentity") or ""
    if not holder:
        return Check("scheduler-leader", FAIL, f"Lease {where} has no holder (released)", "check the scheduler pods")
    renewed = spec.get("renewTime") or spec.get("acquireTime")
    if not renewed:
        return Check("scheduler-leader", FAIL, f"Lease {where} held by {holder} was never renewed")
    age = (now - _time(str(renewed))).total_seconds()
    duration = float(spec.get("leaseDurationSeconds") or 15)
    if age > duration:
        return Check(
            "scheduler-leader",
            FAIL,
            f"Lease {where} held by {holder}, last renewed {age:.0f} s ago (lease {duration:.0f} s): stale",
            "the leader is stuck or gone; check the scheduler pods and their logs",
        )
    return Check("scheduler-leader", OK, f"Lease {where} held by {holder}, renewed {age:.0f} s ago")


def scheduler_conf(configmap: Mapping[str, Any] | None, *, where: str, expected: bool) -> Check:
    if configmap is None:
        return Check("scheduler-conf", WARN, f"no ConfigMap {where}", "helm upgrade" if expected else "")
    data = configmap.get("data") or {}
    text = data.get("volcano-scheduler.conf", next(iter(data.values()), ""))
    try:
        conf = configure.parse(text)
    except errors.ConfigError as exc:
        return Check("scheduler-conf", FAIL, f"{where}: {exc}", "fix scheduler.conf in the values")
    plugins = sum(len(t) for t in conf.tiers)
    return Check("scheduler-conf", OK, f"{where}: actions {', '.join(conf.actions)}; {plugins} plugins")
