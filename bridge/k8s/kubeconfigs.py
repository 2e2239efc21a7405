"""Connections to a kube-apiserver: found as kubectl finds them, and the kubeconfig a local cluster needs.

:func:`resolve` is the one way every command connects. Its order is kubectl's (client-go's
loading rules, then its in-cluster fallback):

1. ``--kubeconfig PATH``: that file only; a missing file is an error.
2. ``$KUBECONFIG``: a list of files (``:``-separated); those that exist are merged, the first
   to define a name (cluster, user, context) or a ``current-context`` wins. ``~/.kube/config``
   is not read when the variable is set.
3. ``~/.kube/config``.
4. The pod's service account: ``$KUBERNETES_SERVICE_HOST``/``_PORT`` and the token and CA
   mounted at :data:`SERVICE_ACCOUNT`.

``context`` picks a named context of the kubeconfig instead of its ``current-context``. Relative
file paths in a kubeconfig are relative to the file that holds them; inline ``*-data`` is written
to a private folder. Nothing found is a :class:`NoConnectionError` that lists what was tried.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import os
import pathlib
import ssl
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from bridge import errors, inputs

__all__ = ["SERVICE_ACCOUNT", "Connection", "NoConnectionError", "in_cluster", "load", "resolve", "write"]

SERVICE_ACCOUNT = pathlib.Path("/var/run/secrets/kubernetes.io/serviceaccount")
# Fields that name a file: relative to the kubeconfig that holds them, as client-go resolves them.
_FILE_FIELDS = {"clusters": ("certificate-authority",), "users": ("client-certificate", "client-key", "tokenFile")}


class NoConnectionError(errors.ConfigError):
    """No kubeconfig and no in-cluster service account; the message lists what was tried."""


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


def resolve(
    explicit: str | None = None,
    *,
    context: str | None = None,
    env: Mapping[str, str] | None = None,
    home: pathlib.Path | None = None,
    service_account: pathlib.Path = SERVICE_ACCOUNT,
) -> Connection:
    """The connection kubectl would use (see the module docstring); ``env`` and ``home`` default
    to this process's."""
    env = os.environ if env is None else env
    if explicit:
        return load(pathlib.Path(explicit), context=context)
    tried = ["no --kubeconfig"]
    listed = env.get("KUBECONFIG", "")
    if listed:
        present = [pathlib.Path(p) for p in listed.split(os.pathsep) if p and pathlib.Path(p).is_file()]
        if present:
            return load(*present, context=context)
        tried.append(f"$KUBECONFIG={listed}: no such file")
    else:
        default = (home or pathlib.Path(env.get("HOME") or pathlib.Path.home())) / ".kube" / "config"
        if default.is_file():
            return load(default, context=context)
        tried += ["$KUBECONFIG not set", f"{default}: no such file"]
    if context:
        tried.append(f"context {context!r} needs a kubeconfig")
    else:
        try:
            return in_cluster(service_account, env)
        except errors.ConfigError as exc:
            tried.append(f"in-cluster: {exc}")
    raise NoConnectionError(
        "no cluster to connect to; tried: " + "; ".join(tried) + " (pass --kubeconfig or set KUBECONFIG)"
    )


def load(path: pathlib.Path, *more: pathlib.Path, context: str | None = None) -> Connection:
    """The server and credentials of ``context`` (default: the current context) of the kubeconfig
    ``path``, merged with ``more`` as kubectl merges the files of $KUBECONFIG."""
    merged: dict[str, Any] = {"clusters": {}, "users": {}, "contexts": {}, "current-context": ""}
    for source in (path, *more):
        doc = _read(source)
        for section in ("clusters", "users", "contexts"):
            for item in doc.get(section) or []:
                if isinstance(item, dict) and item.get("name") not in merged[section]:
                    merged[section][item.get("name")] = _absolute(section, dict(item.get(section[:-1]) or {}), source)
        merged["current-context"] = merged["current-context"] or doc.get("current-context") or ""
    where = ", ".join(map(str, (path, *more)))
    name = context or merged["current-context"]
    if not name:
        raise errors.ConfigError(f"{where}: no current-context (pass --context)")
    ctx = _named(merged["contexts"], name, "context", where)
    cluster = _named(merged["clusters"], ctx.get("cluster", ""), "cluster", where)
    user = _named(merged["users"], ctx.get("user", ""), "user", where)
    if not cluster.get("server"):
        raise errors.ConfigError(f"{where}: cluster {ctx.get('cluster')!r} has no server")
    scratch = functools.cache(lambda: pathlib.Path(tempfile.mkdtemp(prefix="vbridge-kubeconfig-")))
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = _text(pathlib.Path(user["tokenFile"]), "token file")
    return Connection(
        server=str(cluster["server"]).rstrip("/"),
        ca_file=_file(cluster, "certificate-authority", scratch),
        cert_file=_file(user, "client-certificate", scratch),
        key_file=_file(user, "client-key", scratch),
        token=token,
    )


def in_cluster(folder: pathlib.Path = SERVICE_ACCOUNT, env: Mapping[str, str] | None = None) -> Connection:
    """The pod's own service account, as client-go's rest.InClusterConfig reads it (without a
    ca.crt, the system's CAs)."""
    env = os.environ if env is None else env
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise errors.ConfigError("not in a pod: KUBERNETES_SERVICE_HOST/PORT not set")
    token = folder / "token"
    if not token.is_file():
        raise errors.ConfigError(f"no service-account token at {token}")
    host = f"[{host}]" if ":" in host else host
    return Connection(
        server=f"https://{host}:{port}",
        ca_file=folder / "ca.crt" if (folder / "ca.crt").is_file() else None,
        cert_file=None,
        key_file=None,
        token=_text(token, "service-account token"),
    )


def _read(path: pathlib.Path) -> dict[str, Any]:
    try:
        doc = inputs.yaml_document(str(path), inputs.read(str(path), streams=True).decode()) or {}
    except errors.InputError as exc:
        raise errors.ConfigError(f"cannot read kubeconfig {path}: {exc.detail}") from exc
    except UnicodeDecodeError as exc:
        raise errors.ConfigError(f"cannot read kubeconfig {path}: not UTF-8 text ({exc.reason})") from exc
    if not isinstance(doc, dict):
        raise errors.ConfigError(f"kubeconfig {path} is not a mapping")
    return doc


def _text(path: pathlib.Path, what: str) -> str:
    try:
        return path.read_text().strip()
    except OSError as exc:
        raise errors.ConfigError(f"cannot read {what} {path}: {exc.strerror}") from exc


def _absolute(section: str, entry: dict[str, Any], source: pathlib.Path) -> dict[str, Any]:
    for key in _FILE_FIELDS.get(section, ()):
        if entry.get(key):
            entry[key] = str(source.parent / entry[key])
    return entry


def _named(items: dict[str, dict[str, Any]], name: str, what: str, where: str) -> dict[str, Any]:
    if name not in items:
        raise errors.ConfigError(f"{where}: no {what} named {name!r}")
    return items[name]


def _file(entry: dict[str, Any], key: str, scratch: Callable[[], pathlib.Path]) -> pathlib.Path | None:
    if entry.get(key):
        return pathlib.Path(entry[key])
    data = entry.get(f"{key}-data")
    if not data:
        return None
    out = scratch() / key
    out.write_bytes(base64.b64decode(data))
    out.chmod(0o600)
    return out
