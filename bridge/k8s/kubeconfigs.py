"""Kubeconfig files: write the one a local cluster needs, read the current context of any."""

from __future__ import annotations

import base64
import dataclasses
import pathlib
import ssl
import tempfile
from typing import Any

import yaml

from bridge import errors

__all__ = ["Connection", "in_cluster", "load", "resolve", "write"]

SERVICE_ACCOUNT = pathlib.Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclasses.dataclass(frozen=True)
class Connection:
    server: str
    ca_file: pathlib.Path | None
    cert_file: pathlib.Path | None
    key_file: pathlib.Path | None
    token: str | None = None

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        if self.cert_file and self.key_file:
            ctx.load_cert_chain(str(self.cert_file), str(self.key_file))
        return ctx


def write(path: pathlib.Path, *, server: str, ca: pathlib.Path, cert: pathlib.Path, key: pathlib.Path) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "vbridge", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": "vbridge-admin", "user": {"client-certificate": str(cert), "client-key": str(key)}}],
        "contexts": [{"name": "vbridge", "context": {"cluster": "vbridge", "user": "vbridge-admin"}}],
        "current-context": "vbridge",
    }
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    path.chmod(0o600)


def _named(items: list[dict[str, Any]], name: str, what: str, source: pathlib.Path) -> dict[str, Any]:
    for item in items or []:
        if item.get("name") == name:
            return dict(item.get(what) or {})
    raise errors.ConfigError(f"{source}: no {what} named {name!r}")


def _file(entry: dict[str, Any], key: str, scratch: pathlib.Path) -> pathlib.Path | None:
    if entry.get(key):
        return pathlib.Path(entry[key])
    data = entry.get(f"{key}-data")
    if not data:
        return None
    scratch.mkdir(parents=True, exist_ok=True)
    out = scratch / key
    out.write_bytes(base64.b64decode(data))
    out.chmod(0o600)
    return out


def load(path: pathlib.Path) -> Connection:
    """The current context's server and credentials; inline ``*-data`` is written to a private folder."""
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise errors.ConfigError(f"cannot read kubeconfig {path}: {exc}") from exc
    ctx = _named(doc.get("contexts", []), doc.get("current-context", ""), "context", path)
    cluster = _named(doc.get("clusters", []), ctx.get("cluster", ""), "cluster", path)
    user = _named(doc.get("users", []), ctx.get("user", ""), "user", path)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="vbridge-kubeconfig-"))
    return Connection(
        server=cluster["server"].rstrip("/"),
        ca_file=_file(cluster, "certificate-authority", scratch),
        cert_file=_file(user, "client-certificate", scratch),
        key_file=_file(user, "client-key", scratch),
        token=user.get("token"),
    )


def in_cluster(folder: pathlib.Path = SERVICE_ACCOUNT, env: dict[str, str] | None = None) -> Connection:
    """The pod's own service account, as client-go's rest.InClusterConfig reads it."""
    import os

    env = dict(os.environ) if env is None else env
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    if not host or not port or not (folder / "token").exists():
        raise errors.ConfigError("not running in a cluster: no KUBERNETES_SERVICE_HOST/PORT or service-account token")
    host = f"[{host}]" if ":" in host else host
    return Connection(
        server=f"https://{host}:{port}",
        ca_file=folder / "ca.crt",
        cert_file=None,
        key_file=None,
        token=(folder / "token").read_text().strip(),
    )


def resolve(path: str | None) -> Connection:
    """A kubeconfig path if given (or $KUBECONFIG), else the in-cluster service account."""
    import os

    chosen = path or os.environ.get("KUBECONFIG")
    return load(pathlib.Path(chosen)) if chosen else in_cluster()
