"""SparkApplications through the real spark-operator: submit one, check its driver, follow it to the end.

Shared by the tests of the operator with pyspark 3.5 (``test_operators_spark.py``) and 4.x
(``test_operators_spark4.py``).
"""

from __future__ import annotations

from typing import Any

from kubernetes import client as k8s

from tests.support import apiserver, gangs, upstream


def example(name: str) -> dict[str, Any]:
    return upstream.example("spark-operator", name)


def make_namespace(api: k8s.ApiClient, name: str, labels: dict[str, str] | None = None) -> str:
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name, labels=labels)))
    return name


def submit(api: k8s.ApiClient, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        "sparkoperator.k8s.io", "v1beta2", ns, "sparkapplications", body
    )
    return out


def the_podgroup(api: k8s.ApiClient, ns: str) -> dict[str, Any]:
    """The one PodGroup in ``ns`` (the SparkApplication's), once it exists."""
    [pg] = apiserver.eventually(lambda: apiserver.podgroups(api, ns), what="the SparkApplication's PodGroup")
    return pg


def app_state(api: k8s.ApiClient, ns: str, name: str) -> str:
    app = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
        "sparkoperator.k8s.io", "v1beta2", ns, "sparkapplications", name
    )
    return str(((app.get("status") or {}).get("applicationState") or {}).get("state", ""))


def check_driver(api: k8s.ApiClient, op: Any, ns: str, app: str, group: str) -> dict[str, Any]:
    drivers = apiserver.eventually(
        lambda: apiserver.pods(api, ns, "spark-role=driver"), timeout=90, what=f"{app}'s driver pod\n{op.tail()}"
    )
    [driver] = drivers
    meta, spec = driver["metadata"], driver["spec"]
    assert meta["labels"]["sparkoperator.k8s.io/app-name"] == app
    assert meta["labels"]["sparkoperator.k8s.io/launched-by-spark-operator"] == "true"
    assert meta["labels"]["sparkoperator.k8s.io/submission-id"]
    assert meta["annotations"][apiserver.GROUP_NAME] == group
    assert spec["schedulerName"] == "volcano"
    apiserver.eventually(
        lambda: not apiserver.pods(api, ns, "spark-role=driver")[0]["spec"].get("schedulingGates"),
        what="the driver's gate to be lifted",
    )
    [pg] = apiserver.podgroups(api, ns)  # exactly one group: ours, which the operator's pods joined
    assert pg["metadata"]["name"] == group
    return driver


def run_to_completion(api: k8s.ApiClient, op: Any, running: gangs.Gang, ns: str, app: str, group: str) -> None:
    """Our scheduler binds the driver, the simulated node finishes it, the operator completes the app.

    The group is then collected (the bridge deletes a finished application's group, releasing its
    queue share) or, until then, Completed (our scheduler's verdict once every member finished).
    """
    if not running.on:
        return
    gangs.eventually_bound(api, ns, "spark-role=driver", 1)
    [driver] = apiserver.pods(api, ns, "spark-role=driver")
    assert driver["spec"]["nodeName"].startswith("op-node-")  # a Gang node: only our scheduler binds there
    apiserver.eventually(
        lambda: app_state(api, ns, app) == "COMPLETED", timeout=120, what=f"{app} to complete\n{op.tail()}"
    )

    def group_done() -> bool:
        found = [pg for pg in apiserver.podgroups(api, ns) if pg["metadata"]["name"] == group]
        return not found or (found[0].get("status") or {}).get("phase") == "Completed"

    apiserver.eventually(group_done, what=f"PodGroup {group} to be Completed or collected")


def start_confs(server: dict[str, Any]) -> dict[str, str]:
    """The ``--conf`` pairs of a SparkConnect server's start command (the operator writes it as one
    ``bash -c`` string), as the Spark inside will read them."""
    words = server["spec"]["containers"][0]["args"][0].split()
    pairs = [words[i + 1] for i, word in enumerate(words[:-1]) if word == "--conf"]
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)
