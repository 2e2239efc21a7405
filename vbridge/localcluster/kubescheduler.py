"""The built kube-scheduler as a subprocess of the test bed, for pods of ``default-scheduler``.

``vbridge up --backend native`` runs it to place the gangs (with the cluster's native gangs on,
it gets their gate); the tests run it for the chart's own pods, which ask for no scheduler. It
runs with the admin kubeconfig (as the test bed's kube-controller-manager does), without
leader election and without its HTTPS port.
"""

from __future__ import annotations

import yaml

from vbridge.localcluster import binaries, cluster, processes

__all__ = ["start"]


def start(
    lc: cluster.LocalCluster, bins: binaries.Binaries, *, scheduler_name: str = "default-scheduler"
) -> processes.Process:
    """kube-scheduler as ``scheduler_name``; with the cluster's native gangs on, with their gate too."""
    conf = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(lc.kubeconfig), "qps": 50, "burst": 100},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name}],
    }
    path = lc.workdir / "kube-scheduler.yaml"
    path.write_text(yaml.safe_dump(conf))
    argv = [str(bins.path("kube-scheduler")), f"--config={path}", "--secure-port=0", "-v=1"]
    if lc.native_gangs:
        argv.append(cluster.NATIVE_GATES)
    proc = processes.Process("kube-scheduler", argv, log=lc.workdir / "logs" / "kube-scheduler.log")
    proc.start()
    return proc
