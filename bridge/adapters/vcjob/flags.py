"""Job plugin arguments (``spec.plugins.<name>: ["--port=5000", ...]``), read as Volcano reads them. Pure.

Volcano parses each plugin's list with Go's ``flag`` package: ``-name`` or ``--name``, the value
after ``=`` or, for a flag that is not a boolean, as the next argument; a bare boolean flag means
true. :data:`KNOWN` holds, per plugin we carry out with arguments, each flag and its default
(Volcano's, but for ``svc``'s ``publish-not-ready-addresses``: on here, so peers resolve each
other before they are Ready). Where Volcano logs a bad list and carries on with whatever it parsed
before the fault, :func:`parse` raises :class:`bridge.errors.InvalidObjectError` naming the
argument and the flags the plugin knows, so admission denies the job with that message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bridge import errors

__all__ = ["KNOWN", "Value", "parse"]

Value = str | int | bool

KNOWN: Mapping[str, Mapping[str, Value]] = {
    "svc": {"publish-not-ready-addresses": True, "disable-network-policy": False, "inject-hosts-env": True},
    "tensorflow": {"ps": "ps", "worker": "worker", "chief": "chief", "evaluator": "evaluator", "port": 2222},
    "pytorch": {
        "master": "master",
        "worker": "worker",
        "port": 23456,
        "wait-master-enabled": False,
        "wait-master-timeout": 300,
        "wait-master-image": "busybox:1.36.1",
    },
    "mpi": {"master": "master", "worker": "worker", "port": 22},
}
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def _value(plugin: str, name: str, raw: str, default: Value) -> Value:
    bad = f"plugin {plugin!r}: invalid value {raw!r} for --{name}"
    if isinstance(default, bool):
        if raw in _TRUE or raw in _FALSE:
            return raw in _TRUE
        raise errors.InvalidObjectError(f"{bad}: use true or false")
    if isinstance(default, int):
        text = raw[1:] if raw[:1] in "+-" else raw
        if not text.isdigit():
            raise errors.InvalidObjectError(f"{bad}: use a whole number")
        return int(raw)
    return raw


def parse(plugin: str, args: Any) -> dict[str, Value]:
    """The plugin's flags with their defaults, overridden by ``args`` (a list of strings)."""
    known = KNOWN[plugin]
    out = dict(known)
    if args is None:
        return out
    if not isinstance(args, Sequence) or isinstance(args, str) or not all(isinstance(a, str) for a in args):
        raise errors.InvalidObjectError(f"plugin {plugin!r}: arguments must be a list of strings, got {args!r}")
    listed = ", ".join(f"--{k}" for k in known)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            break
        if len(arg) < 2 or not arg.startswith("-") or arg.startswith("---"):
            raise errors.InvalidObjectError(
                f"plugin {plugin!r}: argument {arg!r} is not a flag; write --name=value (known: {listed})"
            )
        name, eq, raw = arg.lstrip("-").partition("=")
        if name not in known:
            raise errors.InvalidObjectError(f"plugin {plugin!r}: unknown argument --{name}; known: {listed}")
        if not eq:
            if isinstance(known[name], bool):
                raw = "true"
            elif i < len(args):
                raw, i = args[i], i + 1
            else:
                raise errors.InvalidObjectError(f"plugin {plugin!r}: --{name} needs a value")
        out[name] = _value(plugin, name, raw, known[name])
    if i < len(args):
        raise errors.InvalidObjectError(
            f"plugin {plugin!r}: arguments after '--' ({', '.join(args[i:])}) are not read; remove them"
        )
    return out
