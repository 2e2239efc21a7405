"""Locate the Go-built binaries, building them on first use from the wrapper modules in tools/."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import subprocess
import sys

from bridge import errors

__all__ = ["CONTROL_PLANE", "Binaries", "ensure", "repo_root"]

CONTROL_PLANE = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")


def repo_root() -> pathlib.Path | None:
    """The source checkout this package runs from, if it runs from one."""
    root = pathlib.Path(__file__).resolve().parents[2]
    return root if (root / "tools" / "build-binaries.sh").exists() else None


@dataclasses.dataclass(frozen=True)
class Binaries:
    folder: pathlib.Path
    extras: dict[str, pathlib.Path]  # kwok, helm: present only when they built

    def path(self, name: str) -> pathlib.Path:
        if name in self.extras:
            return self.extras[name] / name
        path = self.folder / name
        if not path.exists():
            raise errors.BinaryMissingError(f"{name} is missing from {self.folder}; run tools/build-binaries.sh")
        return path


def _from_env() -> Binaries | None:
    folder = os.environ.get("VBRIDGE_BIN_DIR")
    if not folder:
        return None
    path = pathlib.Path(folder)
    missing = [n for n in CONTROL_PLANE if not (path / n).exists()]
    if missing:
        raise errors.BinaryMissingError(f"VBRIDGE_BIN_DIR={path} lacks {', '.join(missing)}")
    return Binaries(folder=path, extras={})


def ensure(*, build: bool = True, extras: bool = False) -> Binaries:
    """Return the binaries, building them when missing (a warm cache builds nothing).

    ``VBRIDGE_BIN_DIR`` overrides the search with a folder holding the control-plane binaries.
    Build progress goes to stderr.
    """
    found = _from_env()
    if found is not None:
        return found
    root = repo_root()
    if root is None:
        raise errors.BinaryMissingError(
            "no control-plane binaries: set VBRIDGE_BIN_DIR to a folder with "
            + ", ".join(CONTROL_PLANE)
            + " or run from a volcano-bridge checkout"
        )
    script = root / "tools" / "build-binaries.sh"
    env = dict(os.environ)
    if not build:
        env["VBRIDGE_NO_BUILD"] = "1"
    if not extras:
        env["VBRIDGE_SKIP_EXTRAS"] = "1"
    proc = subprocess.run(["bash", str(script)], stdout=subprocess.PIPE, stderr=sys.stderr, text=True, env=env)
    if proc.returncode != 0:
        raise errors.BinaryMissingError(f"{script} failed with exit code {proc.returncode} (its output is above)")
    sets = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    if "controlplane" not in sets:
        raise errors.BinaryMissingError(f"{script} printed no control-plane folder")
    return Binaries(
        folder=pathlib.Path(sets.pop("controlplane")),
        extras={name: pathlib.Path(path) for name, path in sets.items()},
    )
