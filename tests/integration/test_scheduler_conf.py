"""``vbridge scheduler`` refuses at start-up a conf naming what it does not carry out, naming it;
the chart's default conf (drf included) starts. A real process against the test bed."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from tests.support import ctlproc
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration
VALUES = pathlib.Path(__file__).resolve().parents[2] / "charts" / "volcano-bridge" / "values.yaml"


def scheduler(lc: cluster.LocalCluster, conf: str, tmp_path: pathlib.Path, name: str) -> tuple[ctlproc.Proc, int]:
    path = tmp_path / f"{name}.conf"
    path.write_text(conf)
    port = cluster.free_port()
    args = ["scheduler", f"--kubeconfig={lc.kubeconfig}", f"--conf={path}", f"--metrics-port={port}"]
    # A scheduler name no pod asks for: this one must bind nothing of the other tests'.
    return ctlproc.Proc(name, [*args, "--scheduler-name=conf-check"], tmp_path), port


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        (
            "tiers:\n- plugins: [{name: gang}, {name: drf}, {name: sla}, {name: tdm}]\n",
            "Volcano plugin(s) sla, tdm not implemented by this scheduler: remove them from the conf",
        ),
        ('actions: "enqueue, allocate, shuffle"\n', "Volcano action(s) shuffle not implemented by this scheduler"),
        (
            "tiers:\n- plugins: [{name: gang}, {name: drf, enableHierarchy: true}]\n",
            "plugin drf: enableHierarchy: hierarchical DRF (HDRF, volcano.sh/hierarchy annotations) is not implemented",
        ),
    ],
    ids=["plugins", "action", "switch"],
)
def test_a_conf_it_cannot_carry_out_stops_it_naming_why(
    control_plane: cluster.LocalCluster, tmp_path: pathlib.Path, conf: str, message: str
) -> None:
    proc, _ = scheduler(control_plane, conf, tmp_path, "refused")
    try:
        assert proc.popen.wait(60) == 1  # a runtime error (kubectl: 1); 2 is for a command line it cannot read
    finally:
        proc.stop()
    assert f"vbridge: error: {message}" in proc.log.read_text()


def test_the_charts_default_conf_starts(control_plane: cluster.LocalCluster, tmp_path: pathlib.Path) -> None:
    conf = yaml.safe_load(VALUES.read_text())["scheduler"]["conf"]
    assert "name: drf" in conf
    proc, port = scheduler(control_plane, conf, tmp_path, "chart-default")
    try:
        ctlproc.wait_for(f"http://127.0.0.1:{port}/healthz", 200, proc, timeout=60)
        assert proc.terminate() == 0
    finally:
        proc.stop()
    assert "vbridge: error" not in proc.log.read_text()
