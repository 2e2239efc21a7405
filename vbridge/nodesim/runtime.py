"""The opt-in runtime: pods of our image, bound to a runtime node, run as local processes.

A node is a runtime node when the :class:`Config` names it (the simulator labels it
``sim.vbridge.io/runtime=process``, so a pod can ask for one with a nodeSelector); a pod on
such a node runs for real when every container's image repository is one of
``Config.images`` (by default our image's), else it gets the plain simulated behaviour.

For such a pod the runtime, as a kubelet would:

- takes a pod IP from the node's pool (addresses inside the node's network namespace, which
  the caller made) and reports it at once, so the endpoints controller can use it;
- fetches the ConfigMaps and Secrets the pod reads and requests a token for its
  ServiceAccount bound to the pod (TokenRequest), waiting while something is missing;
- writes the volumes (``atomicdir``) and writes them again every ``resync`` seconds, so a
  rotated Secret reaches the process;
- runs each container (``procs``) in the node's network namespace, where a relay makes the
  apiserver reachable at 127.0.0.1 on its own port (``KUBERNETES_SERVICE_HOST``/``PORT``);
- reports container states, restarts and readiness as pod status;
- on deletion sends SIGTERM, waits the grace period, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import logging
import os
import pathlib
import shutil
import sys
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

from bridge import defaults, errors
from bridge.k8s import client, paths
from vbridge.nodesim import atomicdir, containers, envvars, procs, relay, rootfs, volumes

__all__ = ["Config", "NodeNet", "Runtime", "Timing", "repository"]

log = logging.getLogger(__name__)
_BIN = str(pathlib.Path(sys.executable).parent)
# The checkout this simulator runs from: the "image content" of the pods it runs. On PYTHONPATH,
# so a pod runs this checkout's code even when the virtualenv's editable install names another
# (a git worktree sharing the main checkout's virtualenv).
_SOURCE = str(pathlib.Path(__file__).resolve().parents[2])
# What the process runs from, kept visible under any volume: the virtualenv, the interpreter it
# was made from, and the checkout.
_KEEP = tuple(os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, _SOURCE))


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def repository(image: str) -> str:
    """``host/name:tag@digest`` → ``host/name``."""
    image = image.split("@", 1)[0]
    head, _, tail = image.rpartition("/")
    return f"{head}/{tail.split(':', 1)[0]}" if head else tail.split(":", 1)[0]


@dataclasses.dataclass(frozen=True)
class NodeNet:
    host_ip: str
    pod_ips: tuple[str, ...]
    netns: str | None = None  # path of the network namespace (/run/netns/NAME); None: the host's


@dataclasses.dataclass(frozen=True)
class Config:
    workdir: pathlib.Path
    nodes: Mapping[str, NodeNet]
    images: tuple[str, ...] = defaults.SIM_RUNTIME_IMAGES
    programs: Mapping[str, str] = dataclasses.field(default_factory=lambda: {"vbridge": f"{_BIN}/vbridge"})
    entrypoint: tuple[str, ...] = ("vbridge",)  # the image's ENTRYPOINT and CMD (Dockerfile)
    cmd: tuple[str, ...] = ("--help",)
    image_env: Mapping[str, str] = dataclasses.field(
        default_factory=lambda: {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": _SOURCE}
    )
    path: str = f"{_BIN}:/usr/local/bin:/usr/bin:/bin"
    resync: float = defaults.SIM_RESYNC_SECONDS
    backoff: tuple[float, float] = (defaults.SIM_BACKOFF_FIRST, defaults.SIM_BACKOFF_MOST)


@dataclasses.dataclass
class Timing:
    seen: float
    running: float | None = None
    ready: float | None = None


class _Pod:
    def __init__(self, rt: Runtime, pod: dict[str, Any], net: NodeNet, pod_ip: str) -> None:
        self.rt, self.net, self.pod_ip = rt, net, pod_ip
        meta = pod["metadata"]
        self.uid, self.ns, self.name = meta["uid"], meta["namespace"], meta["name"]
        pod = volumes.with_service_account(pod)
        pod.setdefault("status", {}).update({"podIP": pod_ip, "hostIP": net.host_ip, "podIPs": [{"ip": pod_ip}]})
        self.pod = pod
        self.dir = rt.config.workdir / "pods" / f"{self.ns}_{self.name}_{self.uid}"
        self.start_time = _now()
        self.statuses = [
            containers.ContainerStatus(c["name"], c.get("image", "")) for c in pod["spec"].get("containers", [])
        ]
        self.containers: list[procs.Container] = []
        self.tokens: dict[volumes.TokenKey, tuple[str, float]] = {}
        self.dirty = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []

    # -- sources and volumes -------------------------------------------------------------

    async def _get(self, resource: str, name: str) -> dict[str, Any] | None:
        try:
            return await self.rt.api.request("GET", paths.resource("v1", resource, namespace=self.ns, name=name))
        except errors.ApiError as exc:
            if exc.status == 404:
                return None
            raise

    async def _token(self, key: volumes.TokenKey) -> str:
        have = self.tokens.get(key)
        if have and time.monotonic() < have[1]:
            return have[0]
        audience, seconds = key
        named = self.pod["spec"].get("serviceAccountName")
        spec: dict[str, Any] = {"expirationSeconds": seconds}
        if named:  # the apiserver binds only to a pod that names the account (the admission plugin that
            # fills in "default" is off on the test bed): an unnamed one gets an unbound token of "default"
            spec["boundObjectRef"] = {"apiVersion": "v1", "kind": "Pod", "name": self.name, "uid": self.uid}
        sa = named or "default"
        if audience:
            spec["audiences"] = [audience]
        path = paths.resource("v1", "serviceaccounts", namespace=self.ns, name=sa) + "/token"
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
        answer = await self.rt.api.request("POST", path, body=body)
        token = str(answer["status"]["token"])
        self.tokens[key] = (token, time.monotonic() + 0.8 * seconds)  # the kubelet renews at 80 %
        return token

    async def sources(self) -> volumes.Sources:
        needs = volumes.needs(self.pod)
        cms = {n: o for n in needs.configmaps if (o := await self._get("configmaps", n)) is not None}
        secrets = {n: o for n in needs.secrets if (o := await self._get("secrets", n)) is not None}
        tokens: dict[volumes.TokenKey, str] = {}
        for key in needs.tokens:
            try:
                tokens[key] = await self._token(key)
            except errors.ApiError as exc:
                raise envvars.Missing(f"token request: {exc}") from exc
        return volumes.Sources(self.pod, cms, secrets, tokens)

    def volume_dir(self, name: str) -> pathlib.Path:
        for volume in self.pod["spec"].get("volumes") or []:
            if volume["name"] == name and "hostPath" in volume:
                return pathlib.Path(volume["hostPath"]["path"])
        return self.dir / "volumes" / name

    def materialise(self, src: volumes.Sources) -> list[str]:
        """Write every volume; the names of those whose content changed."""
        changed = []
        for volume in self.pod["spec"].get("volumes") or []:
            files = volumes.render(volume, src)
            folder = self.volume_dir(volume["name"])
            if files is None:
                folder.mkdir(parents=True, exist_ok=True)
            elif atomicdir.write(folder, files):
                changed.append(volume["name"])
        return changed

    # -- containers ----------------------------------------------------------------------

    def _container(
        self, spec: dict[str, Any], status: containers.ContainerStatus, src: volumes.Sources
    ) -> procs.Container:
        cfg = self.rt.config
        host, port = self.rt.api_address(self.net)
        base = {**cfg.image_env, **envvars.in_cluster(host, port), "HOSTNAME": self.name, "HOME": "/root"}
        env = envvars.resolve(spec, self.pod, configmaps=src.configmaps, secrets=src.secrets, base=base)
        words = containers.argv(spec, entrypoint=cfg.entrypoint, cmd=cfg.cmd, env=env)
        words = containers.localize(words, cfg.programs)
        binds = []
        for m in volumes.mounts(spec):
            source = self.volume_dir(m.volume) / m.sub_path if m.sub_path else self.volume_dir(m.volume)
            binds.append(rootfs.Bind(str(source), m.path, m.read_only, source.is_file()))
        base_dir = self.dir / "containers" / spec["name"]
        root = base_dir / "root"
        root.mkdir(parents=True, exist_ok=True)
        script = rootfs.script(
            root=str(root),
            scratch=str(base_dir / "scratch"),
            entries=self.rt.entries,
            binds=binds,
            argv=words,
            workdir=spec.get("workingDir") or "/",
            path=env.get("PATH", cfg.path),
            exists=os.path.exists,
            realpath=os.path.realpath,
            keep=_KEEP,
        )
        outer = ["/usr/bin/unshare", "--mount", "--", "/bin/sh", "-c", script]
        if self.net.netns:
            outer = ["/usr/bin/nsenter", f"--net={self.net.netns}", *outer]
        return procs.Container(
            status,
            argv=outer,
            env={k: v for k, v in env.items() if k != "PATH"},
            logs=base_dir / "logs",
            restart_policy=self.pod["spec"].get("restartPolicy", "Always"),
            pod_ip=self.pod_ip,
            readiness=containers.probe(spec.get("readinessProbe"), spec),
            liveness=containers.probe(spec.get("livenessProbe"), spec),
            backoff=cfg.backoff,
            changed=self.dirty.set,
        )

    async def run(self) -> None:
        self.tasks.append(asyncio.create_task(self._reporter()))
        self.dirty.set()
        while True:
            try:
                src = await self.sources()
                self.materialise(src)
                specs = self.pod["spec"].get("containers", [])
                self.containers = [self._container(c, s, src) for c, s in zip(specs, self.statuses, strict=True)]
                break
            except (envvars.Missing, ValueError, errors.ApiError) as exc:  # not there yet, or a bad spec
                for s in self.statuses:
                    s.waiting("CreateContainerConfigError", str(exc))
                self.dirty.set()
                await asyncio.sleep(1.0)
        for c in self.containers:
            c.start()
        self.tasks.append(asyncio.create_task(self._resync()))

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(self.rt.config.resync)
            try:
                changed = self.materialise(await self.sources())
                if changed:
                    log.info("pod %s/%s: volumes %s updated", self.ns, self.name, ", ".join(changed))
            except (envvars.Missing, errors.ApiError) as exc:  # keep what was written
                log.info("pod %s/%s: resync: %s", self.ns, self.name, exc)

    async def _reporter(self) -> None:
        path = paths.resource("v1", "pods", namespace=self.ns, name=self.name) + "/status"
        timing = self.rt.timings[self.uid]
        while True:
            await self.dirty.wait()
            self.dirty.clear()
            now = time.monotonic()
            if timing.running is None and any("running" in s.state for s in self.statuses):
                timing.running = now - timing.seen
            if timing.ready is None and self.statuses and all(s.ready for s in self.statuses):
                timing.ready = now - timing.seen
            body = containers.pod_status(
                self.statuses, pod_ip=self.pod_ip, host_ip=self.net.host_ip, start_time=self.start_time, now=_now()
            )
            body["metadata"] = {"uid": self.uid}
            try:
                await self.rt.api.request("PATCH", path, body=body, content_type=client.STRATEGIC)
            except errors.ApiError as exc:
                if exc.status in (404, 409):
                    return
                log.warning("pod %s/%s: status: %s", self.ns, self.name, exc)
            except Exception as exc:  # a dropped connection: the next change reports again
                log.warning("pod %s/%s: status: %s", self.ns, self.name, exc)
            await asyncio.sleep(0.05)  # coalesce bursts of changes

    async def stop(self, grace: float) -> None:
        for task in self.tasks[1:]:
            task.cancel()
        await asyncio.gather(*(c.stop(grace) for c in self.containers))
        self.dirty.set()
        await asyncio.sleep(0.1)
        for task in self.tasks[:1]:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        shutil.rmtree(self.dir, ignore_errors=True)


class Runtime:
    def __init__(self, api: client.Client, apiserver: str, config: Config) -> None:
        self.api, self.config = api, config
        url = urllib.parse.urlsplit(apiserver)
        self.api_host, self.api_port = url.hostname or "127.0.0.1", url.port or 443
        self.entries = _entries()
        self.timings: dict[str, Timing] = {}  # pod UID → seconds from start() to Running, to Ready
        self._free = {name: list(net.pod_ips) for name, net in config.nodes.items()}
        self._pods: dict[str, _Pod] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._relays: dict[str, asyncio.Server] = {}
        self._relay_lock = asyncio.Lock()  # two pods starting at once on a new node: one relay

    def handles(self, pod: Mapping[str, Any]) -> bool:
        spec = pod.get("spec", {})
        images = [c.get("image", "") for c in spec.get("containers", [])]
        return (
            spec.get("nodeName") in self.config.nodes
            and bool(images)
            and all(repository(i) in self.config.images for i in images)
        )

    def has(self, uid: str) -> bool:
        return uid in self._pods

    def api_address(self, net: NodeNet) -> tuple[str, int]:
        return ("127.0.0.1", self.api_port) if net.netns else (self.api_host, self.api_port)

    async def _relay(self, net: NodeNet) -> None:
        async with self._relay_lock:
            if net.netns and net.netns not in self._relays:
                sock = relay.listen_in(net.netns, "127.0.0.1", self.api_port)
                self._relays[net.netns] = await relay.serve(sock, self.api_host, self.api_port)

    async def start(self, pod: dict[str, Any]) -> None:
        uid, node = pod["metadata"]["uid"], pod["spec"]["nodeName"]
        if uid in self._pods:
            return
        if not self._free[node]:
            raise errors.ConfigError(f"node {node}: no free pod IP")
        net = self.config.nodes[node]
        await self._relay(net)
        self.timings[uid] = Timing(seen=time.monotonic())
        run = _Pod(self, pod, net, self._free[node].pop(0))
        self._pods[uid] = run
        self._tasks[uid] = asyncio.create_task(run.run())

    async def stop(self, uid: str, grace: float) -> None:
        run = self._pods.pop(uid, None)
        if run is None:
            return
        task = self._tasks.pop(uid)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await run.stop(grace)
        self._free[run.pod["spec"]["nodeName"]].append(run.pod_ip)

    async def close(self) -> None:
        await asyncio.gather(*(self.stop(uid, 0) for uid in list(self._pods)), return_exceptions=True)
        for server in self._relays.values():
            server.close()
        self._relays.clear()


def _entries() -> list[rootfs.Entry]:
    out = []
    with os.scandir("/") as it:
        for e in it:
            if e.is_symlink():
                out.append(rootfs.Entry(e.name, "link", os.readlink(e.path)))
            elif e.is_dir():
                out.append(rootfs.Entry(e.name, "dir"))
            else:
                out.append(rootfs.Entry(e.name, "file"))
    return sorted(out, key=lambda e: e.name)
