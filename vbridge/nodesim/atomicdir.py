"""A volume folder written as the kubelet's AtomicWriter does, so readers never see half an update.

The files live in a timestamped folder ``..<stamp>``; ``..data`` is a symlink to it, swapped by
a rename; each top-level name is a symlink through ``..data``. A bind mount of the volume
folder therefore shows every update at once, as in a real pod.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import time
from collections.abc import Sequence

from vbridge.nodesim import volumes

__all__ = ["DATA", "current", "write"]

DATA = "..data"


def current(folder: pathlib.Path) -> dict[str, tuple[bytes, int]]:
    """path → (content, mode) of what the folder shows now."""
    data = folder / DATA
    if not data.is_dir():
        return {}
    out = {}
    for path in data.rglob("*"):
        if path.is_file():
            out[str(path.relative_to(data))] = (path.read_bytes(), path.stat().st_mode & 0o7777)
    return out


def write(folder: pathlib.Path, files: Sequence[volumes.File]) -> bool:
    """Make the folder show exactly ``files``; False when it already did."""
    wanted = {f.path: (f.data, f.mode) for f in files}
    if folder.is_dir() and current(folder) == wanted:
        return False
    folder.mkdir(parents=True, exist_ok=True)
    stamp = folder / f"..{time.strftime('%Y_%m_%d_%H_%M_%S')}.{time.monotonic_ns()}"
    stamp.mkdir()
    for f in files:
        target = stamp / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.data)
        target.chmod(f.mode)
    data = folder / DATA
    old = os.readlink(data) if data.is_symlink() else None
    tmp = folder / "..data_tmp"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(stamp.name)
    tmp.rename(data)
    tops = {pathlib.PurePosixPath(f.path).parts[0] for f in files}
    for name in tops:
        link = folder / name
        if not link.is_symlink():
            link.symlink_to(f"{DATA}/{name}")
    for entry in folder.iterdir():
        if entry.is_symlink() and not entry.name.startswith("..") and entry.name not in tops:
            entry.unlink()
    if old:
        shutil.rmtree(folder / old, ignore_errors=True)
    return True
