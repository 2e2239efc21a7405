"""Third-party CRDs (Spark operator, Kubeflow training-operator, mpi-operator, JobSet) from pinned Go modules.

As Kueue's ``dep-crds``: ``go mod download -json MODULE@VERSION`` gives the module's folder in
the module cache; the CRD files are copied from there into ``.cache/dep-crds/<set>/``. Nothing is
vendored into the repository. The two MPIJob CRDs share one name (``mpijobs.kubeflow.org``,
v1 in the training-operator, v2beta1 in the mpi-operator), so they are separate sets.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

from bridge import errors

__all__ = ["SETS", "ensure", "module_dir"]

# set name -> (module, version, [files inside the module])
SETS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "spark-operator": (
        "github.com/kubeflow/spark-operator/v2",
        "v2.5.2",
        (
            "config/crd/bases/sparkoperator.k8s.io_sparkapplications.yaml",
            "config/crd/bases/sparkoperator.k8s.io_scheduledsparkapplications.yaml",
            "config/crd/bases/sparkoperator.k8s.io_sparkconnects.yaml",
        ),
    ),
    "training-operator": (
        "github.com/kubeflow/training-operator",
        "v1.9.4",
        tuple(
            f"manifests/base/crds/kubeflow.org_{plural}.yaml"
            for plural in ("tfjobs", "pytorchjobs", "xgboostjobs", "paddlejobs", "jaxjobs")
        ),
    ),
    "training-operator-mpi": (
        "github.com/kubeflow/training-operator",
        "v1.9.4",
        ("manifests/base/crds/kubeflow.org_mpijobs.yaml",),
    ),
    "mpi-operator": (
        "github.com/kubeflow/mpi-operator",
        "v0.8.2",
        ("manifests/base/kubeflow.org_mpijobs.yaml",),
    ),
    "jobset": (
        "sigs.k8s.io/jobset",
        "v0.12.0",
        ("config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",),
    ),
}


def module_dir(module: str, version: str) -> pathlib.Path:
    env = dict(os.environ, GOTOOLCHAIN="local", GOWORK="off", GOFLAGS="-mod=mod")
    proc = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"], capture_output=True, text=True, env=env
    )
    try:
        info = json.loads(proc.stdout)
    except ValueError:
        info = {"Error": proc.stderr.strip() or "no output"}
    if "Error" in info or proc.returncode != 0:
        raise errors.ConfigError(f"go mod download {module}@{version} failed: {info.get('Error', proc.stderr)}")
    return pathlib.Path(info["Dir"])


def ensure(name: str, cache: pathlib.Path) -> list[pathlib.Path]:
    """The CRD files of one set, copied into ``cache/<name>-<version>/`` on first use."""
    module, version, files = SETS[name]
    folder = cache / f"{name}-{version}"
    wanted = [folder / pathlib.Path(f).name for f in files]
    if not all(p.exists() for p in wanted):
        source = module_dir(module, version)
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for f in files:
            shutil.copyfile(source / f, tmp / pathlib.Path(f).name)
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    return wanted
