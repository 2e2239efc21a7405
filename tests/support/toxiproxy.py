"""Toxiproxy (built from its Go module by tools/build-binaries.sh) between components and the apiserver.

``in_front_of(bins, lc)`` starts ``toxiproxy-server`` on loopback with one proxy, ``apiserver``,
listening on a free port and forwarding to ``lc``'s apiserver, and writes ``kubeconfig``: the
admin kubeconfig with that listen address as its server. TLS passes through the TCP proxy
unchanged (the apiserver's certificate is valid for 127.0.0.1), so a component given that
kubeconfig talks to the apiserver as before, through whatever toxics are set:

    with proxied.toxic("latency", latency=200, jitter=50):
        ...                       # every byte each way 200 ± 50 ms late
    proxied.cut()                 # refuse and drop every connection; proxied.restore() undoes it

Toxics are Toxiproxy's own (https://github.com/Shopify/toxiproxy#toxics): ``latency``,
``bandwidth`` (KB/s), ``timeout`` (stop forwarding, close after ``timeout`` ms, 0 = never),
``reset_peer`` (TCP RST after ``timeout`` ms), ``slow_close``, ``limit_data``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import pathlib
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import yaml

from vbridge.localcluster import binaries, cluster, processes

__all__ = ["Proxied", "in_front_of"]


@dataclasses.dataclass
class Proxied:
    api: str  # Toxiproxy's HTTP API
    listen: int  # the proxy's port: components connect here
    kubeconfig: pathlib.Path
    name: str = "apiserver"

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=10) as out:
            raw = out.read()
        return json.loads(raw) if raw else None

    def add(self, kind: str, *, stream: str = "downstream", toxicity: float = 1.0, **attributes: float) -> str:
        name = f"{kind}-{stream}-{time.monotonic_ns()}"
        body = {"name": name, "type": kind, "stream": stream, "toxicity": toxicity, "attributes": attributes}
        self.call("POST", f"/proxies/{self.name}/toxics", body)
        return name

    def remove(self, toxic: str) -> None:
        self.call("DELETE", f"/proxies/{self.name}/toxics/{toxic}")

    @contextlib.contextmanager
    def toxic(self, kind: str, *, both: bool = False, up: bool = False, **attributes: float) -> Iterator[None]:
        """``kind`` on the way back (on the way up instead with ``up``, both ways with ``both``)
        for the block."""
        streams = ("downstream", "upstream") if both else ("upstream",) if up else ("downstream",)
        names = [self.add(kind, stream=s, **attributes) for s in streams]
        try:
            yield
        finally:
            for name in names:
                self.remove(name)

    def cut(self) -> None:
        """Disable the proxy: open connections are closed and new ones refused."""
        self.call("POST", f"/proxies/{self.name}", {"enabled": False})

    def restore(self) -> None:
        self.call("POST", f"/proxies/{self.name}", {"enabled": True})

    def clear(self) -> None:
        self.call("POST", "/reset")  # every proxy enabled, every toxic removed


def _kubeconfig(lc: cluster.LocalCluster, port: int) -> pathlib.Path:
    doc = yaml.safe_load(lc.kubeconfig.read_text())
    for entry in doc["clusters"]:
        entry["cluster"]["server"] = f"https://127.0.0.1:{port}"
    path = lc.workdir / "kubeconfig-proxied"
    path.write_text(yaml.safe_dump(doc))
    return path


@contextlib.contextmanager
def in_front_of(bins: binaries.Binaries, lc: cluster.LocalCluster) -> Iterator[Proxied]:
    folder = bins.extras.get("toxiproxy")
    if folder is None:
        raise FileNotFoundError("toxiproxy-server is not built: run tools/build-binaries.sh (tools/dev setup does)")
    api_port, listen = cluster.free_port(), cluster.free_port()
    proc = processes.Process(
        "toxiproxy",
        [str(folder / "toxiproxy-server"), "-host=127.0.0.1", f"-port={api_port}"],
        log=lc.workdir / "logs" / "toxiproxy.log",
    )
    proc.start()
    try:
        proxied = Proxied(f"http://127.0.0.1:{api_port}", listen, _kubeconfig(lc, listen))
        deadline = time.monotonic() + 30
        while True:
            proc.check_alive()
            try:
                proxied.call("GET", "/version")
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        upstream = lc.server.removeprefix("https://")
        proxied.call("POST", "/proxies", {"name": proxied.name, "listen": f"127.0.0.1:{listen}", "upstream": upstream})
        yield proxied
    finally:
        proc.stop()
