"""The mount script that gives a local process a container's view of the file system. Pure.

The script runs as root inside a private mount namespace (``unshare --mount``). It builds a
root on a tmpfs at ``root``: each top-level entry of the host's ``/`` bind-mounted (symlinks
copied), so the host's tools and our virtualenv are there; each volume bind-mounted at its
``mountPath`` (read-only where asked). A ``mountPath`` whose folder is missing on the host is
made without touching the host: at the top level in the tmpfs, deeper under an overlay of its
nearest existing ancestor (upper and work folders in ``scratch``). Host paths in ``keep`` (the
interpreter and the source the process runs from) that a volume would hide (an ``emptyDir`` at
``/tmp`` over a checkout under ``/tmp``) are bound again on top of it. Then it ``exec``s
``chroot`` into that root with the container's working directory, ``PATH`` and argv (the
script itself runs with the system's ``PATH``).
"""

from __future__ import annotations

import dataclasses
import posixpath
import shlex
from collections.abc import Callable, Sequence

__all__ = ["Bind", "Entry", "script"]


@dataclasses.dataclass(frozen=True)
class Bind:
    src: str  # host path of the volume folder (or the file a subPath names)
    dst: str  # mountPath
    read_only: bool = False
    is_file: bool = False


@dataclasses.dataclass(frozen=True)
class Entry:
    """A top-level entry of the host's ``/``."""

    name: str
    kind: str  # "dir" | "file" | "link"
    target: str = ""


def _ancestors(path: str) -> list[str]:
    out = []
    while path != "/":
        path = posixpath.dirname(path)
        out.append(path)
    return out


def _depth(path: str) -> int:
    return len([p for p in path.split("/") if p])


def script(
    *,
    root: str,
    scratch: str,
    entries: Sequence[Entry],
    binds: Sequence[Bind],
    argv: Sequence[str],
    workdir: str = "/",
    path: str = "/usr/local/bin:/usr/bin:/bin",
    exists: Callable[[str], bool],
    realpath: Callable[[str], str],
    keep: Sequence[str] = (),
) -> str:
    q = shlex.quote
    lines = ["set -e", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", f"mount -t tmpfs -o mode=755 tmpfs {q(root)}"]
    for e in entries:
        at = q(posixpath.join(root, e.name))
        if e.kind == "link":
            lines.append(f"ln -s {q(e.target)} {at}")
        elif e.kind == "dir":
            lines.append(f"mkdir {at} && mount --rbind {q('/' + e.name)} {at}")
        else:
            lines.append(f"touch {at} && mount --bind {q('/' + e.name)} {at}")
    resolved = [(b, realpath(b.dst)) for b in binds]
    overlays: set[str] = set()
    create: list[tuple[str, bool]] = []
    for b, dst in resolved:
        if exists(dst):
            continue
        create.append((dst, b.is_file))
        anchor = next(a for a in _ancestors(dst) if a == "/" or exists(a))
        if anchor != "/":
            overlays.add(anchor)
    kept = sorted(a for a in overlays if not any(o != a and a.startswith(o.rstrip("/") + "/") for o in overlays))
    for i, anchor in enumerate(kept):
        upper, work = posixpath.join(scratch, f"overlay{i}", "upper"), posixpath.join(scratch, f"overlay{i}", "work")
        options = f"lowerdir={anchor},upperdir={upper},workdir={work}"
        lines.append(f"mkdir -p {q(upper)} {q(work)}")
        lines.append(f"mount -t overlay overlay -o {q(options)} {q(root + anchor)}")
    for dst, is_file in create:
        at = q(root + dst)
        lines.append(f"mkdir -p {q(root + posixpath.dirname(dst))} && touch {at}" if is_file else f"mkdir -p {at}")
    for b, dst in sorted(resolved, key=lambda pair: _depth(pair[1])):
        ro = " -o ro" if b.read_only else ""
        lines.append(f"mount --bind{ro} {q(b.src)} {q(root + dst)}")
    for kept_path in sorted(set(keep), key=_depth):
        if any(kept_path == dst or kept_path.startswith(dst.rstrip("/") + "/") for _, dst in resolved):
            lines.append(f"mkdir -p {q(root + kept_path)} && mount --rbind {q(kept_path)} {q(root + kept_path)}")
    command = " ".join(q(a) for a in argv)
    lines.append(f"exec chroot {q(root)} /usr/bin/env --chdir={q(workdir)} -- PATH={q(path)} {command}")
    return "\n".join(lines) + "\n"
