"""A bus.volcano.sh Command acts only for what its author may do, on the real apiserver.

Commands are made as vcctl makes them (``vcjobs.vcctl_command``), by a namespace editor
(impersonated, the built-in ``edit`` role with the chart's user roles folded in) or by the
admin. Our webhook records the author; our controller asks a SubjectAccessReview for them. A
refused Command gets a Warning Event ``CommandRefused`` and is deleted, and its target is left
as it was.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import keys
from tests.support import apiserver, buscommands, planes, users, vcjobs
from vbridge.localcluster import binaries, cluster

pytestmark = pytest.mark.integration

scheduler = vcjobs.scheduler
env = vcjobs.env


@pytest.fixture(scope="module", autouse=True)
def _rbac(bins: binaries.Binaries, api_client: k8s.ApiClient) -> None:
    users.aggregate_edit(api_client, bins.path("helm"))


@pytest.fixture
def queue(api_client: k8s.ApiClient) -> Iterator[dict[str, Any]]:
    """A fresh Open queue (never ``default``: a refusal that failed must not close it for every test)."""
    crd = k8s.CustomObjectsApi(api_client)
    body = {"apiVersion": "/".join(apiserver.PG), "kind": "Queue", "metadata": {"name": "q-" + uuid.uuid4().hex[:6]}}
    made: dict[str, Any] = crd.create_cluster_custom_object(*apiserver.PG, "queues", {**body, "spec": {"weight": 1}})
    yield made
    crd.delete_cluster_custom_object(*apiserver.PG, "queues", made["metadata"]["name"])


def refused(api: k8s.ApiClient, command: dict[str, Any]) -> str:
    """The message of the Command's CommandRefused Event, once it is deleted."""
    meta = command["metadata"]
    apiserver.eventually(lambda: buscommands.gone(api, command), what="the refused Command to be deleted")
    found = apiserver.eventually(
        lambda: [e for e in buscommands.events(api, meta["namespace"], meta["name"]) if e[1] == "CommandRefused"],
        what="the CommandRefused Event",
    )
    assert len(found) == 1 and found[0][0] == "Warning", found
    return found[0][2]


def test_an_editors_command_against_a_queue_is_refused(
    env: vcjobs.Env, control_plane: cluster.LocalCluster, queue: dict[str, Any]
) -> None:
    api, ns, _ = env
    user, as_editor = users.editor(api, control_plane, ns)
    try:
        assert users.can(as_editor, "create", "bus.volcano.sh", "commands", ns)
        assert not users.can(as_editor, "update", "scheduling.volcano.sh", "queues", "")
        close = vcjobs.vcctl_command(as_editor, queue, "CloseQueue", namespace=ns)
        recorded = (close["metadata"].get("annotations") or {}).get(keys.COMMAND_AUTHOR, "")
        assert f'"username":"{user}"' in recorded, "admission records the author"
        name = queue["metadata"]["name"]
        assert refused(api, close) == f"{user} may not update Queue {name}: the Command is refused"
        assert buscommands.queue_state(api, name) in ("", "Open")
        # And the one Volcano files in default: the editor may not even make it there.
        with pytest.raises(k8s.ApiException) as info:
            vcjobs.vcctl_command(as_editor, queue, "CloseQueue", namespace="default")
        assert info.value.status == 403
    finally:
        as_editor.close()


def test_an_editors_command_against_another_namespaces_job_is_refused(
    env: vcjobs.Env, control_plane: cluster.LocalCluster, request: pytest.FixtureRequest
) -> None:
    api, ns, _ = env
    _, as_editor = users.editor(api, control_plane, ns)
    with planes.fresh_namespace(api, request) as other:
        try:
            theirs = buscommands.mpi_job(api, other)
            mine = buscommands.mpi_job(as_editor, ns)  # the same name in the editor's own namespace
            assert mine["metadata"]["name"] == theirs["metadata"]["name"]
            with pytest.raises(k8s.ApiException) as info:  # no rights there: the apiserver refuses it
                vcjobs.vcctl_command(as_editor, theirs, "AbortJob", namespace=other)
            assert info.value.status == 403
            # Here, naming their Job by its uid: refused outright, neither Job touched.
            aimed = vcjobs.vcctl_command(as_editor, theirs, "AbortJob", namespace=ns)
            message = refused(api, aimed)
            assert f"target uid {theirs['metadata']['uid']} is not Job {ns}/" in message, message
            for where in (ns, other):
                name = theirs["metadata"]["name"]
                annotations = vcjobs.get_job(api, where, name)["metadata"].get("annotations") or {}
                assert "vbridge.io/job-command" not in annotations
                assert vcjobs.phase(api, where, name) != "Aborted"
        finally:
            as_editor.close()


def test_an_editor_still_aborts_their_own_job(env: vcjobs.Env, control_plane: cluster.LocalCluster) -> None:
    api, ns, _ = env
    _, as_editor = users.editor(api, control_plane, ns)
    try:
        made = buscommands.mpi_job(as_editor, ns)
        name = made["metadata"]["name"]
        abort = vcjobs.vcctl_command(as_editor, made, "AbortJob", namespace=ns)
        apiserver.eventually(lambda: buscommands.gone(api, abort), what="the Command to be taken up")
        apiserver.eventually(lambda: vcjobs.phase(api, ns, name) == "Aborted", timeout=60, what="Aborted")
        assert not [e for e in buscommands.events(api, ns, abort["metadata"]["name"]) if e[1] == "CommandRefused"]
    finally:
        as_editor.close()


def test_a_command_without_a_recorded_author_is_refused(env: vcjobs.Env, queue: dict[str, Any]) -> None:
    """kube-system is outside the webhook (as a Command made while it was down): even the admin's
    Command there carries no author, and is refused."""
    api, _, _ = env
    close = vcjobs.vcctl_command(api, queue, "CloseQueue", namespace="kube-system")
    assert keys.COMMAND_AUTHOR not in (close["metadata"].get("annotations") or {})
    assert "has no author recorded by admission" in refused(api, close)
    assert buscommands.queue_state(api, queue["metadata"]["name"]) in ("", "Open")
