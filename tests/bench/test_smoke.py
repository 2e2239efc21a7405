"""Bench smoke: every bench under ``bench/`` runs at its smallest size and prints its ratios.

No timing is asserted (issue 17, item 6): a bench that exits 0 and prints its figures and its
ratio lines has not rotted. The sizes are the "smallest size for CI" of bench/README.md. The
ones with a control plane are integration tests (skipped without the Go-built binaries, failed
under CI=true); all of them took 378 s on a two-core machine at load average 13–16 (106 s for the first five at load 1).
"""

from __future__ import annotations

import pathlib
import shutil

import pytest

from tests.support import benchsmoke
from vbridge.localcluster import binaries

NUMBER = r"[0-9][0-9,.]*"


def test_scheduler_growth(tmp_path: pathlib.Path) -> None:
    png = tmp_path / "growth.png"
    out = benchsmoke.run("scheduler_growth.py", ["--nodes", "10,20", "--density", "10,30", "--plot", str(png)], 60)
    benchsmoke.assert_prints(out, r"^ +20 +30 +600 ", rf"^ratio cycle CPU per pod, .*: {NUMBER} \(1 = linear\)")
    assert png.stat().st_size > 0


@pytest.mark.timeout(200)
def test_scheduler_core() -> None:
    # Both builds of the core; the compiled one is tools/compile-core.sh's (built by tools/dev
    # test's compiled pass before this one, else here, in about a minute).
    out = benchsmoke.run("scheduler_core.py", ["--size", "0.01"], timeout=190)
    benchsmoke.assert_prints(out, rf"decisions/s at .* ratio {NUMBER}", rf"cycle at .* ratio {NUMBER}", r"peak RSS")
    assert [line for line in out.splitlines() if line.startswith("core: ")] == ["core: interpreted", "core: compiled"]
    one = benchsmoke.run(
        "scheduler_core.py", ["--size", "0.01", "--only", "scale", "--kinds", "2", "--core", "here"], 60
    )
    benchsmoke.assert_prints(one, r"^scale: .*10% of the gangs with pod affinity or spread, kinds 2\)", r"cycle at ")


@pytest.mark.integration
def test_nodesim(bins: binaries.Binaries) -> None:
    out = benchsmoke.run("nodesim.py", ["--nodes", "10", "--pods", "100"], timeout=90)
    benchsmoke.assert_prints(out, rf"^anchor: .* {NUMBER} pods/s", rf"^ratio simulator/anchor: {NUMBER}")


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_admission(bins: binaries.Binaries) -> None:
    # The servers part needs wrk (apt); without it the pod-create part alone, as the README says.
    parts = "all" if shutil.which("wrk") else "pods"
    out = benchsmoke.run(
        "admission.py", ["--seconds", "1", "--pods", "100", "--rounds", "1", "--parts", parts], timeout=170
    )
    benchsmoke.assert_prints(out, rf"with / without, median of 1 rounds: {NUMBER}%")


@pytest.mark.integration
def test_scheduler_e2e(bins: binaries.Binaries) -> None:
    flags = ["--nodes", "10", "--gangs", "2", "--gang-size", "3", "--singles", "10"]
    out = benchsmoke.run("scheduler_e2e.py", flags, timeout=90)
    benchsmoke.assert_prints(out, rf"^ours: .* {NUMBER} pods/s", r"^ceiling: .* binds/s", rf"^ratio: +{NUMBER}")


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_scheduler_compare(bins: binaries.Binaries) -> None:
    flags = ["--nodes", "5", "--gangs", "2", "--gang-size", "3", "--singles", "10"]
    out = benchsmoke.run("scheduler_compare.py", [*flags, "--only", "ours,kube,ceiling", "--no-build"], timeout=290)
    for work in ("gangs", "singles"):
        benchsmoke.assert_prints(out, rf"^{work} +ours/kube +{NUMBER}×", rf"^{work} +ours/ceiling +{NUMBER}%")


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_scheduler_restart(bins: binaries.Binaries) -> None:
    flags = ["--nodes", "5", "--pods", "20", "--groups", "4", "--pending", "4", "--timeout", "60"]
    flags += ["--only", "ours"]
    out = benchsmoke.run("scheduler_restart.py", flags, timeout=170)
    benchsmoke.assert_prints(out, rf"ours restart→first bind {NUMBER} s", rf"ours peak RSS {NUMBER} GB")


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_scheduler_churn(bins: binaries.Binaries) -> None:
    flags = ["--nodes", "5", "--seconds", "3", "--rate", "2", "--lifetime", "1", "--sample", "1", "--drain", "30"]
    out = benchsmoke.run("scheduler_churn.py", [*flags, "--only", "ours,kube"], timeout=170)
    benchsmoke.assert_prints(
        out,
        rf"^  gangs/ours: .* pod latency p50 {NUMBER} s p99 {NUMBER} s",
        r"RSS MB over time: ",
        rf"^singles: kube/ours pod latency p99 {NUMBER}×",
    )


@pytest.mark.integration
@pytest.mark.timeout(240)
def test_scheduler_churn_backlog(bins: binaries.Binaries) -> None:
    flags = ["--nodes", "4", "--seconds", "3", "--rate", "2", "--lifetime", "1", "--sample", "1", "--drain", "30"]
    flags += ["--streams", "backlog", "--backlog-pods", "40", "--only", "ours,kube"]
    out = benchsmoke.run("scheduler_churn.py", flags, timeout=230)
    benchsmoke.assert_prints(
        out,
        rf"^  backlog/ours: .* pod latency p50 {NUMBER} s p99 {NUMBER} s",
        r"^    backlog pods bound at the end: 4;",
        r"^    apiserver requests from vbridge-scheduler: .*create",
        r"^    apiserver requests from kube-scheduler: .*create",
        rf"^backlog: kube/ours pod latency p99 {NUMBER}×  target ≥ 1×",
    )
