"""Each backend on its own control plane, for the end-to-end tests that run on both.

``plane(request, backend)`` (a module-scoped fixture's body, parametrized by ``BACKENDS``):

- ``volcano``: the session's control plane with our webhooks and reconcilers
  (``tests/conftest.py``'s ``control_plane`` and ``bridge``); the test brings our scheduler
  where it binds (``gangs.Gang``, ``vcjobs.scheduler``);
- ``native``: a control plane of its own with the Workload API (``nativebed.started``): our
  bridge on ``backend="native"``, four simulated nodes of ``cpu``, kube-scheduler 1.37 as
  ``default-scheduler`` and our scheduler's queue half lifting ``keys.QUEUE_GATE``.

``Plane.binder`` is the schedulerName the admitted pods carry (``volcano``, or kube-scheduler's
``default-scheduler``); ``fresh_namespace(api, request)`` makes a namespace named after the
test (``tests/conftest.py``'s ``namespace`` too). A test module takes the fixtures by name:
``on = planes.on`` (module-scoped, one per backend) and ``namespace = planes.namespace`` (a
fresh one per test, on ``on``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from tests.support import nativebed
from vbridge.localcluster import cluster

__all__ = ["BACKENDS", "Plane", "fresh_namespace", "namespace", "on", "plane"]

BACKENDS = ("volcano", "native")
BINDER = {"volcano": "volcano", "native": "default-scheduler"}


@dataclasses.dataclass(frozen=True)
class Plane:
    backend: str
    lc: cluster.LocalCluster
    api: k8s.ApiClient

    @property
    def binder(self) -> str:
        return BINDER[self.backend]

    @property
    def native(self) -> bool:
        return self.backend == "native"


@contextlib.contextmanager
def plane(request: pytest.FixtureRequest, backend: str, *, cpu: str = "4") -> Iterator[Plane]:
    if backend == "volcano":
        request.getfixturevalue("bridge")
        yield Plane(backend, request.getfixturevalue("control_plane"), request.getfixturevalue("api_client"))
        return
    bins = request.getfixturevalue("bins")
    workdir = request.getfixturevalue("tmp_path_factory").mktemp("native-plane")
    options = {"namespace": "native-plane", "prefix": "np", "nodes_count": 4, "cpu": cpu, "backend": "native"}
    with nativebed.started(bins, workdir, **options) as (lc, api):
        yield Plane(backend, lc, api)


@contextlib.contextmanager
def fresh_namespace(api: k8s.ApiClient, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace named after the test, deleted afterwards."""
    name = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:40].strip("-") + "-" + uuid.uuid4().hex[:5]
    core = k8s.CoreV1Api(api)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        core.delete_namespace(name)


@pytest.fixture(scope="module", params=BACKENDS)
def on(request: pytest.FixtureRequest) -> Iterator[Plane]:
    with plane(request, request.param) as made:
        yield made


@pytest.fixture
def namespace(on: Plane, request: pytest.FixtureRequest) -> Iterator[str]:
    with fresh_namespace(on.api, request) as name:
        yield name
