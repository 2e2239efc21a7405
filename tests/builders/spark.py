"""Builders for SparkApplications and spark-submit pods."""

from __future__ import annotations

import copy
from typing import Any

APP: dict[str, Any] = {
    "apiVersion": "sparkoperator.k8s.io/v1beta2",
    "kind": "SparkApplication",
    "metadata": {"name": "pi", "namespace": "team-a"},
    "spec": {
        "type": "Scala",
        "mode": "cluster",
        "image": "spark:3.5.3",
        "mainClass": "org.apache.spark.examples.SparkPi",
        "mainApplicationFile": "local:///opt/spark/examples/jars/spark-examples.jar",
        "sparkVersion": "3.5.3",
        "driver": {"cores": 1, "memory": "512m", "serviceAccount": "spark"},
        "executor": {"cores": 1, "instances": 2, "memory": "512m"},
    },
}


def _with(example: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``example`` whose ``spec`` members are replaced (dicts: updated; None: removed)."""
    body = copy.deepcopy(example)
    for key, value in spec.items():
        if isinstance(value, dict) and isinstance(body["spec"].get(key), dict):
            body["spec"][key].update(value)
        elif value is None:
            body["spec"].pop(key, None)
        else:
            body["spec"][key] = value
    return body


def app(**spec: Any) -> dict[str, Any]:
    return _with(APP, spec)


_ARGS = {  # as spark-submit writes them; the image's entrypoint hands a driver's to spark-submit
    "driver": [
        "driver",
        "--properties-file",
        "/opt/spark/conf/spark.properties",
        "--class",
        "org.apache.spark.examples.SparkPi",
        "local:///opt/spark/examples/jars/spark-examples.jar",
    ],
    "executor": ["executor"],
}


def conf_map(properties: str = "spark.executor.instances=1\n") -> dict[str, Any]:
    """The ConfigMap spark-submit writes just after the driver (``submit_pod("driver")`` mounts it)."""
    return {"metadata": {"name": "spark-drv-abc-conf-map"}, "data": {"spark.properties": properties}}


def submit_pod(
    role: str,
    *,
    app_id: str = "spark-0123456789abcdef0123456789abcdef",
    scheduler: str = "volcano",
    annotations: dict[str, str] | None = None,
    operator_app: str | None = None,
) -> dict[str, Any]:
    """A pod as spark-submit creates it (driver or executor)."""
    labels = {"spark-app-selector": app_id, "spark-role": role, "spark-app-name": "pi", "spark-version": "3.5.3"}
    if role == "executor":
        labels["spark-exec-id"] = "1"
    if operator_app:
        labels.update(
            {"sparkoperator.k8s.io/app-name": operator_app, "sparkoperator.k8s.io/launched-by-spark-operator": "true"}
        )
    name = "pi-abc-driver" if role == "driver" else "pi-abc-exec-1"
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [
            {
                "name": f"spark-kubernetes-{role}",
                "image": "spark:3.5.3",
                "args": _ARGS[role],
                "resources": {"requests": {"cpu": "1", "memory": "896Mi"}, "limits": {"memory": "896Mi"}},
            }
        ],
    }
    if role == "driver":
        spec["volumes"] = [
            {
                "name": "spark-conf-volume-driver",
                "configMap": {
                    "name": "spark-drv-abc-conf-map",
                    "items": [{"key": "spark.properties", "path": "spark.properties"}],
                },
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "team-a", "labels": labels, "annotations": annotations or {}},
        "spec": spec,
    }


CONNECT: dict[str, Any] = {  # spark-operator v2.5.2's own example (examples/sparkconnect), trimmed
    "apiVersion": "sparkoperator.k8s.io/v1alpha1",
    "kind": "SparkConnect",
    "metadata": {"name": "spark-connect", "namespace": "team-a"},
    "spec": {
        "sparkVersion": "4.0.4",
        "server": {
            "template": {
                "metadata": {"labels": {"key1": "value1"}},
                "spec": {
                    "containers": [
                        {
                            "name": "spark-kubernetes-driver",
                            "image": "docker.io/apache/spark:4.0.4",
                            "resources": {
                                "requests": {"cpu": 1, "memory": "1Gi"},
                                "limits": {"cpu": 1, "memory": "1Gi"},
                            },
                        }
                    ],
                    "serviceAccount": "spark-operator-spark",
                },
            }
        },
        "executor": {
            "instances": 2,
            "cores": 1,
            "memory": "512m",
            "template": {
                "spec": {"containers": [{"name": "spark-kubernetes-executor", "image": "docker.io/apache/spark:4.0.4"}]}
            },
        },
    },
}


def connect(name: str = "spark-connect", **spec: Any) -> dict[str, Any]:
    """A SparkConnect; ``spec`` members replace (or, for dicts, update) the example's."""
    body = _with(CONNECT, spec)
    body["metadata"]["name"] = name
    return body


def connect_executor(server: dict[str, Any], conf: dict[str, str], index: int, *, app_id: str) -> dict[str, Any]:
    """An executor pod as a SparkConnect server's Spark (4.x) creates it from its ``--conf`` pairs:
    named ``<podNamePrefix>-exec-<n>``, labelled and annotated from the ``spark.kubernetes.executor.*``
    confs, on the conf's scheduler, owned by the server pod, sized from cores and memory (512m +
    the 384 MiB overhead floor here)."""

    def prefixed(prefix: str) -> dict[str, str]:
        return {k.removeprefix(prefix): v for k, v in conf.items() if k.startswith(prefix)}

    labels = {
        **prefixed("spark.kubernetes.executor.label."),
        "spark-app-selector": app_id,
        "spark-exec-id": str(index),
        "spark-role": "executor",
        "spark-exec-resourceprofile-id": "0",
    }
    meta = server["metadata"]
    owner = {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"], "controller": True}
    resources = {"requests": {"cpu": conf["spark.executor.cores"], "memory": "896Mi"}, "limits": {"memory": "896Mi"}}
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "spark-kubernetes-executor", "image": "spark:4.0.4", "resources": resources}],
    }
    if "spark.kubernetes.executor.scheduler.name" in conf:
        spec["schedulerName"] = conf["spark.kubernetes.executor.scheduler.name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{conf['spark.kubernetes.executor.podNamePrefix']}-exec-{index}",
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": prefixed("spark.kubernetes.executor.annotation."),
            "ownerReferences": [owner],
        },
        "spec": spec,
    }
