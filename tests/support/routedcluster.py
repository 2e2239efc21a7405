"""A LocalCluster whose kube-apiserver reaches webhooks (and aggregated APIs) through endpoints.

kube-apiserver resolves a webhook's Service to its ClusterIP unless ``--enable-aggregator-routing``
is set, in which case it uses the Service's endpoints (``buildServiceResolver`` in
``pkg/controlplane/apiserver/config.go``: ``NewEndpointServiceResolver``). With no kube-proxy on
the test bed a ClusterIP leads nowhere, so the flag is what makes a webhook Service in front of a
pod work. LocalCluster has no hook for extra flags; this subclass adds them as the processes start.
"""

from __future__ import annotations

from vbridge.localcluster import cluster, processes

EXTRA_APISERVER_FLAGS = ("--enable-aggregator-routing=true",)


class RoutedCluster(cluster.LocalCluster):
    def _run(self, proc: processes.Process) -> None:
        if proc.name == "kube-apiserver":
            proc.argv += list(EXTRA_APISERVER_FLAGS)
        super()._run(proc)
