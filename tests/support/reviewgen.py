"""Many hostile AdmissionReviews from one seed, fast: the fuzz tests' generator.

A hypothesis example is slow (milliseconds); 100,000 reviews per kind need a cheaper source. Each
example draws one integer, and ``batch(number, seeds, kind)`` derives ``PER_SEED`` reviews from
it with ``random.Random(number)``: a valid object of the kind (``SEEDS``, ``RICH``) with one to
four mutations, each at a member picked by a random walk (replaced by a value of another type, a
huge number, a huge or odd string, deep nesting, or an absurd quantity; deleted; unknown members
added), as a CREATE, an UPDATE (its oldObject
mutated on its own) or a DELETE; a few are ``garbled`` bytes instead. The same number gives the
same reviews, so hypothesis's shrinking and a printed number reproduce a failure.

Numbers JSON cannot carry as Python values (``1e400``, 5,000 digits: past CPython's 4,300-digit
conversion limit) are written into the encoded body as raw tokens.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

from tests.builders import kubeflow as kf
from tests.builders import spark, vcjob
from tests.support import admission as support

__all__ = ["PER_SEED", "RICH", "SEEDS", "Review", "batch", "garbled", "members", "mutate"]

PER_SEED = 100
GARBLED_EVERY = 20  # one review in this many is garbled bytes instead

# Raw JSON numbers, spliced into the encoded body in place of their marker strings.
_RAW = {
    "\u0001n0": b"1e400",
    "\u0001n1": b"-1e400",
    "\u0001n2": b"1e30000000",
    "\u0001n3": b"9" * 5000,
    "\u0001n4": b"-" + b"9" * 5000,
    "\u0001n5": b"0." + b"0" * 4000 + b"1",
    "\u0001n6": b"18446744073709551616",
    "\u0001n7": b"-9223372036854775809",
}
# A valid object of each kind, by webhook path, with the (group, version, kind) it is reviewed as.
SEEDS: dict[str, tuple[tuple[str, str, str], dict[str, Any]]] = {
    "/mutate/sparkoperator-k8s-io-sparkapplication": (
        ("sparkoperator.k8s.io", "v1beta2", "SparkApplication"),
        spark.app(batchScheduler="volcano"),
    ),
    "/mutate/sparkoperator-k8s-io-sparkconnect": (
        ("sparkoperator.k8s.io", "v1alpha1", "SparkConnect"),
        spark.connect(),
    ),
    "/mutate/kubeflow-org-tfjob": (support.TF, kf.tfjob("t", PS=kf.replica(1), Worker=kf.replica(2))),
    "/mutate/kubeflow-org-pytorchjob": (
        ("kubeflow.org", "v1", "PyTorchJob"),
        kf.pytorchjob("p", Master=kf.replica(1), Worker=kf.replica(2)),
    ),
    "/mutate/kubeflow-org-mpijob-v1": (
        ("kubeflow.org", "v1", "MPIJob"),
        kf.mpijob("m", "v1", Launcher=kf.replica(1), Worker=kf.replica(2)),
    ),
    "/mutate/kubeflow-org-mpijob": (
        ("kubeflow.org", "v2beta1", "MPIJob"),
        kf.mpijob("m", Launcher=kf.replica(1), Worker=kf.replica(2)),
    ),
    "/mutate/batch-volcano-sh-job": (("batch.volcano.sh", "v1alpha1", "Job"), vcjob.simple("v")),
    "/mutate/spark-apache-org-pod": (support.POD, spark.submit_pod("driver")),
    "/mutate/kubeflow-org-pod": (support.POD, kf.operator_pod("t", "worker")),
    "/mutate/scheduling-volcano-sh-podgroup": (
        ("scheduling.volcano.sh", "v1beta1", "PodGroup"),
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g"},
            "spec": {"minMember": 2, "queue": "default", "minResources": {"cpu": "2"}},
        },
    ),
    "/mutate/scheduling-volcano-sh-queue": (
        ("scheduling.volcano.sh", "v1beta1", "Queue"),
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "q"},
            "spec": {"weight": 2, "capability": {"cpu": "8"}},
        },
    ),
    "/mutate/bus-volcano-sh-command": (
        ("bus.volcano.sh", "v1alpha1", "Command"),
        {
            "apiVersion": "bus.volcano.sh/v1alpha1",
            "kind": "Command",
            "metadata": {"generateName": "q-closequeue-", "annotations": {"vbridge.io/command-author": "{}"}},
            "action": "CloseQueue",
            "target": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": "q", "uid": "u"},
        },
    ),
}

# Objects using more of what the adapters read (sizes, queues, policies, plugins), so mutations
# reach it too.
_CONF = {
    "spark.executor.memory": "2g",
    "spark.executor.memoryOverhead": "512m",
    "spark.kubernetes.memoryOverheadFactor": "0.2",
    "spark.memory.offHeap.enabled": "true",
    "spark.memory.offHeap.size": "1g",
    "spark.executor.pyspark.memory": "1g",
    "spark.driver.minMemoryOverhead": "400m",
    "spark.kubernetes.executor.request.cores": "500m",
}
_DYNAMIC = {"enabled": True, "initialExecutors": 1, "minExecutors": 1, "maxExecutors": 4}
_POLICY = {
    "minAvailable": 2,
    "queue": "default",
    "priorityClass": "high",
    "minResources": {"cpu": "2", "memory": "4Gi"},
}
_TEMPLATE_META = {"labels": {"app": "x"}, "annotations": {"a": "b"}}
_SIZED = kf.replica(2, kf.container("main", "1", "1Gi", gpu=1), priority_class="high")
_SIZED["template"]["metadata"] = _TEMPLATE_META


def _kubeflow(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    obj["spec"].update(runPolicy={"schedulingPolicy": dict(_POLICY)}, **spec)
    return obj


def _task(name: str, replicas: int, **extra: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    template = {"metadata": dict(_TEMPLATE_META), "spec": {"containers": [container]}}
    return {"name": name, "replicas": replicas, "template": template, **extra}


RICH: dict[str, list[dict[str, Any]]] = {
    "/mutate/sparkoperator-k8s-io-sparkapplication": [
        spark.app(
            batchScheduler="volcano",
            type="Python",
            memoryOverheadFactor="0.3",
            batchSchedulerOptions={"queue": "default", "priorityClassName": "high"},
            dynamicAllocation=dict(_DYNAMIC),
            sparkConf=dict(_CONF),
            executor={"gpu": {"name": "nvidia.com/gpu", "quantity": 1}, "coreRequest": "500m", "labels": {"a": "b"}},
            driver={"annotations": {"a": "b"}, "schedulerName": "volcano", "memoryOverhead": "1g"},
        ),
        spark.app(batchScheduler="volcano", mode="client", batchSchedulerOptions={"resources": {"cpu": "4"}}),
    ],
    "/mutate/sparkoperator-k8s-io-sparkconnect": [
        spark.connect(dynamicAllocation=dict(_DYNAMIC), sparkConf=dict(_CONF), server={"cores": 2, "memory": "2g"})
    ],
    "/mutate/kubeflow-org-tfjob": [_kubeflow(kf.tfjob("t", PS=kf.replica(1), Worker=_SIZED, Chief=kf.replica(1)))],
    "/mutate/kubeflow-org-pytorchjob": [_kubeflow(kf.pytorchjob("p", Master=kf.replica(1), Worker=_SIZED))],
    "/mutate/kubeflow-org-mpijob-v1": [_kubeflow(kf.mpijob("m", "v1", Launcher=kf.replica(1), Worker=_SIZED))],
    "/mutate/kubeflow-org-mpijob": [
        _kubeflow(
            kf.mpijob("m", Launcher=kf.replica(1), Worker=_SIZED),
            launcherCreationPolicy="WaitForWorkersReady",
            runLauncherAsWorker=True,
        )
    ],
    "/mutate/batch-volcano-sh-job": [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "mpi", "annotations": {"scheduling.volcano.sh/queue-name": "default"}},
            "spec": {
                "minAvailable": 2,
                "minSuccess": 1,
                "maxRetry": 2,
                "queue": "default",
                "priorityClassName": "high",
                "plugins": {"ssh": [], "svc": ["--publish-not-ready-addresses"], "env": [], "mpi": ["--port=22"]},
                "policies": [{"event": "PodEvicted", "action": "RestartJob"}, {"exitCode": 3, "action": "AbortJob"}],
                "volumes": [{"mountPath": "/data", "volumeClaimName": "d"}],
                "tasks": [
                    _task("master", 1, dependsOn={"name": ["worker"], "iteration": "any"}),
                    _task(
                        "worker", 2, minAvailable=1, policies=[{"events": ["TaskCompleted"], "action": "CompleteJob"}]
                    ),
                ],
            },
        }
    ],
    "/mutate/spark-apache-org-pod": [
        spark.submit_pod("executor"),
        spark.submit_pod("driver", operator_app="pi", annotations={"scheduling.k8s.io/group-name": "spark-pi-pg"}),
    ],
    "/mutate/kubeflow-org-pod": [kf.operator_pod("t", "ps", 1, operator="pytorchjob-controller")],
    "/mutate/scheduling-volcano-sh-podgroup": [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "annotations": {"a": "b"}},
            "spec": {
                "minMember": 3,
                "minTaskMember": {"ps": 1, "worker": 2},
                "queue": "default",
                "priorityClassName": "high",
                "minResources": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"},
            },
        }
    ],
    "/mutate/scheduling-volcano-sh-queue": [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "child"},
            "spec": {
                "weight": 1,
                "priority": 10,
                "parent": "root",
                "reclaimable": True,
                "capability": {"cpu": "8", "memory": "16Gi"},
                "deserved": {"cpu": "4"},
                "guarantee": {"resource": {"cpu": "1"}},
            },
        }
    ],
    "/mutate/bus-volcano-sh-command": [
        {
            "apiVersion": "bus.volcano.sh/v1alpha1",
            "kind": "Command",
            "metadata": {"name": "j-abortjob-x", "ownerReferences": [{"kind": "Job", "name": "j", "uid": "u"}]},
            "action": "AbortJob",
            "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "u"},
        }
    ],
}
# Who asks: most reviews carry a userInfo (as the apiserver always sends), some an odd one.
_USERS: tuple[Any, ...] = (
    {"username": "alice", "uid": "u-a", "groups": ["team-a", "system:authenticated"], "extra": {"k": ["v"]}},
    {"username": "system:serviceaccount:team-a:ci"},
    {},
    {"username": 7, "groups": "x", "extra": []},
    None,
)


_BIG = ("9" * 5000, "1" + "0" * 400 + "Ki", "9" * 400 + "g", "9" * 400 + "m", "1 Gi")
_ODD_QUANTITIES = "1e400 -1 1e30000000 0.000000001m 1e-400 NaN Infinity -Inf 1Ei 999999999999Ei -0 1..2 1e 0x10 １ 1gb"
QUANTITIES = (*_ODD_QUANTITIES.split(), *_BIG)
_WORDS = "x/y - ../../etc ${x} %s%n UPPER_case true null 0 default volcano vbridge"
ODD_STRINGS = ("", " ", "\x00", "\ud800", "\U0001f600" * 50, "a" * 70_000, "a" * 254 + ".b", *_WORDS.split())
NUMBERS = (0, -1, 1, 2**31, 2**63, 2**64, -(2**63) - 1, 10**300, 1e308, -1e308, 5e-324, 0.5, -0.0)


def _deep(rng: random.Random) -> Any:
    depth = rng.choice((50, 200, 600))  # past msgspec's own limit (500), under CPython's
    out: Any = rng.choice(([], {}, "x", 1))
    for _ in range(depth):
        out = [out] if rng.random() < 0.5 else {"a": out}
    return out


def value(rng: random.Random) -> Any:
    """A hostile value: another type, a huge or odd number or string, deep nesting, a quantity."""
    pick = rng.randrange(11)
    if pick == 0:
        return rng.choice((None, True, False, [], {}, [None], {"": None}))
    if pick == 1:
        return rng.choice(NUMBERS)
    if pick == 2:
        return rng.choice(tuple(_RAW))
    if pick == 3:
        return rng.choice(ODD_STRINGS)
    if pick == 4:
        return _deep(rng)
    if pick in (5, 6):
        return rng.choice(QUANTITIES)
    if pick == 7:
        return [value(rng) for _ in range(rng.randrange(4))]
    if pick == 8:
        return {rng.choice(("name", "spec", "x", "", "metadata", "replicas")): value(rng)}
    if pick == 9:
        return rng.randrange(-(2**70), 2**70)
    return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(1, 12)))


def members(obj: Any) -> list[tuple[tuple[Any, ...], Any]]:
    """Every (path, node) of the object, the root first; none inside deep nesting."""
    out: list[tuple[tuple[Any, ...], Any]] = []
    todo: list[tuple[tuple[Any, ...], Any]] = [((), obj)]
    while todo:
        path, node = todo.pop()
        out.append((path, node))
        if len(path) > 24:
            continue
        if isinstance(node, dict):
            todo.extend(((*path, key), child) for key, child in node.items())
        elif isinstance(node, list):
            todo.extend(((*path, i), child) for i, child in enumerate(node))
    return out


def _pick(rng: random.Random, obj: Any) -> tuple[tuple[Any, ...], Any]:
    """A member by a random walk from the root (never the root when it has members): each step
    goes one level down, stopping at a leaf or with probability 1/4 (as deep as 24 levels)."""
    path: tuple[Any, ...] = ()
    node = obj
    while node and isinstance(node, (dict, list)) and len(path) <= 24 and (not path or rng.random() >= 0.25):
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path, node = (*path, key), node[key]
    return path, node


def _at(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def mutate(rng: random.Random, seed: Any, count: int) -> Any:
    """A copy of ``seed`` with ``count`` mutations, each at a member ``_pick`` chose."""
    obj: Any = json.loads(json.dumps(seed))
    for _ in range(count):
        path, node = _pick(rng, obj)
        action = rng.randrange(6)
        if not path:
            obj = value(rng)
        elif action == 0:
            del _at(obj, path[:-1])[path[-1]]
        elif action == 1 and isinstance(node, dict):
            node[rng.choice(("zz", "", "x" * 300, "spec", "\u00e9"))] = value(rng)
        elif action == 2 and isinstance(node, list):
            node.append(value(rng))
        else:
            _at(obj, path[:-1])[path[-1]] = value(rng)
    return obj


def _encode(body: Any) -> bytes:
    raw = json.dumps(body).encode()
    if b"\\u0001n" in raw:
        for marker, token in _RAW.items():
            raw = raw.replace(json.dumps(marker).encode(), token)
    return raw


def garbled(rng: random.Random, raw: bytes) -> bytes:
    """``raw`` cut short, with bytes flipped, dropped or inserted, or replaced by random bytes."""
    data = bytearray(raw)
    pick = rng.randrange(4)
    if pick == 0:
        return bytes(data[: rng.randrange(len(data) + 1)])
    if pick == 3 or not data:
        return rng.randbytes(rng.randrange(1, 400))
    for _ in range(rng.randrange(1, 8)):
        at = rng.randrange(len(data))
        if pick == 1:
            data[at] = rng.randrange(256)
        elif rng.random() < 0.5:
            del data[at]
        else:
            data.insert(at, rng.choice(b'{}[]",:\\0-e\x00\xff'))
    return bytes(data)


def _envelope(kind: tuple[str, str, str], uid: str, operation: str, obj: Any, old: Any, user: Any) -> dict[str, Any]:
    group, version, name = kind
    request = {
        "uid": uid,
        "kind": {"group": group, "version": version, "kind": name},
        "operation": operation,
        "namespace": "team-a",
        "object": obj,
    }
    if old is not None:
        request["oldObject"] = old
    if user is not None:
        request["userInfo"] = user
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


@dataclasses.dataclass(frozen=True)
class Review:
    body: bytes
    uid: str | None  # the uid the answer must carry; None for garbled bytes (best effort)
    operation: str


def batch(number: int, seeds: list[Any], kind: tuple[str, str, str], size: int = PER_SEED) -> list[Review]:
    """``size`` reviews of ``kind`` derived from ``seeds`` by ``random.Random(number)``."""
    rng = random.Random(number)
    out = []
    for i in range(size):
        seed = rng.choice(seeds)
        uid = f"fz-{number}-{i}"
        operation = rng.choice(("CREATE", "CREATE", "UPDATE", "UPDATE", "DELETE"))
        obj = mutate(rng, seed, rng.randint(1, 4))
        old = mutate(rng, seed, rng.randint(0, 2)) if operation == "UPDATE" else None
        if operation == "DELETE":
            old, obj = obj, None
        raw = _encode(_envelope(kind, uid, operation, obj, old, rng.choice(_USERS)))
        if i % GARBLED_EVERY == GARBLED_EVERY - 1:
            out.append(Review(garbled(rng, raw), None, operation))
        else:
            out.append(Review(raw, uid, operation))
    return out
