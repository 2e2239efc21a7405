"""Reading and waiting on the real apiserver, for the integration tests: the PodGroup API, pods, kubectl.

``eventually`` is how a test waits for a state: it polls ``probe`` until it returns something
truthy (that value is returned) or ``timeout`` passes (an AssertionError naming ``what``; when
``what`` is a function, what it returns then: the state the wait ended in), probing every
``every`` seconds (a probe that lists thousands of objects should not run ten times a second). An
exception the probe raises is not retried: it fails the wait at once. ``backend`` is what
``bridge.k8s.backends.resolve`` makes of a ``--backend`` choice against a control plane.
``calls`` is the apiserver's own count of the calls on one resource so far
(``apiserver_request_total``), by (verb, code).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import pathlib
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bridge.k8s import backends, client, kubeconfigs
from vbridge.localcluster import binaries, cluster

T = TypeVar("T")
PG = ("scheduling.volcano.sh", "v1beta1")
# Spelled out, not taken from bridge.keys: the tests pin the key Volcano reads.
GROUP_NAME = "scheduling.k8s.io/group-name"
POLL_SECONDS = 0.1
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def calls(api: k8s.ApiClient, resource: str, group: str = "") -> collections.Counter[tuple[str, str]]:
    """The apiserver's own count of calls on ``resource`` of ``group`` ("": core) so far
    (``apiserver_request_total``, no subresource: creates, deletes, reads), by (verb, code): e.g.
    ``("POST", "201")``."""
    response = api.call_api("GET", api.configuration.host + "/metrics")
    response.read()
    out: collections.Counter[tuple[str, str]] = collections.Counter()
    for line in response.data.decode().splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels_text, _, value = line.rpartition(" ")
        labels = dict(_LABEL.findall(labels_text))
        if (labels.get("resource"), labels.get("group", "")) == (resource, group) and not labels.get("subresource"):
            out[(labels["verb"], labels["code"])] += int(float(value))
    return out


def eventually(
    probe: Callable[[], T | None],
    timeout: float = 30.0,
    what: str | Callable[[], str] = "condition",
    *,
    every: float = POLL_SECONDS,
) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(every)
    told = what if isinstance(what, str) else what()
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {told}")


def kubectl(bins: binaries.Binaries, lc: cluster.LocalCluster, *args: str) -> str:
    out = subprocess.run(
        [str(bins.path("kubectl")), f"--kubeconfig={lc.kubeconfig}", *args], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def podgroups(api: k8s.ApiClient, ns: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = k8s.CustomObjectsApi(api).list_namespaced_custom_object(*PG, ns, "podgroups")["items"]
    return items


def pods(api: k8s.ApiClient, ns: str, selector: str) -> list[dict[str, Any]]:
    listed = k8s.CoreV1Api(api).list_namespaced_pod(ns, label_selector=selector)
    out: list[dict[str, Any]] = api.sanitize_for_serialization(listed)["items"]
    return out


def delete_pods(api: k8s.ApiClient, ns: str, attempts: int = 5) -> None:
    """Delete every pod of ``ns`` at once (grace 0). With thousands of pods one deletecollection
    can outlast the apiserver's request timeout (504) having deleted only some: it is asked again."""
    for attempt in range(attempts):
        try:
            k8s.CoreV1Api(api).delete_collection_namespaced_pod(ns, grace_period_seconds=0)
            return
        except k8s.ApiException as exc:
            if exc.status != 504 or attempt == attempts - 1:
                raise


def gone(read: Callable[[], object]) -> bool:
    """Whether ``read()`` answers 404: the object was deleted."""
    try:
        read()
    except k8s.ApiException as exc:
        return exc.status == 404
    return False


@contextlib.contextmanager
def started(lc: cluster.LocalCluster) -> Iterator[cluster.LocalCluster]:
    """A control plane of a test's own, stopped however the test ends."""
    lc.start()
    try:
        yield lc
    finally:
        lc.stop()


@contextlib.contextmanager
def client_of(lc: cluster.LocalCluster) -> Iterator[k8s.ApiClient]:
    """A kubernetes client on ``lc``'s admin kubeconfig, closed afterwards."""
    api = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
    try:
        yield api
    finally:
        api.close()


def backend(kubeconfig: pathlib.Path, choice: str) -> str:
    """``backends.resolve(api, choice)`` on a client of ``kubeconfig``."""

    async def main() -> str:
        async with client.Client(kubeconfigs.load(kubeconfig)) as api:
            return await backends.resolve(api, choice)

    return asyncio.run(main())
