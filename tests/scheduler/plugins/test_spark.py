"""Spark's promise: a running driver's executors keep their capacity until they come or time out."""

from __future__ import annotations

import datetime

import pytest

from scheduler import configure, cycle
from scheduler.api import building
from scheduler.framework import session
from tests.builders import scheduler as b
from tests.support import scenarios

STARTED = "2025-01-01T00:59:00Z"  # one minute before scenarios.NOW
LATER = "2025-01-01T00:30:00Z"
SPARK = {"spark-role": "driver", "spark-app-selector": "spark-1"}
EXECUTOR = {"spark-role": "executor", "spark-app-selector": "spark-1"}
NODES = [b.node("n1"), b.node("n2")]  # 8 cpu
APP = b.podgroup("app", min_member=1, min_resources={"cpu": "8"}, phase="Running")
DRIVER = b.pod("driver", group="app", cpu="2", memory=None, node="n1", labels=SPARK, started=STARTED)
OTHER = b.pod("other", group="other", cpu="2", memory=None, created=LATER)
# A SparkConnect's server (the operator's labels): a client-mode driver, its executors Spark's.
CONNECT = {"spark-role": "connect-server", "sparkoperator.k8s.io/connect-name": "sc"}
CONNECT_EXECUTOR = {
    "spark-role": "executor",
    "spark-app-selector": "spark-2",
    "sparkoperator.k8s.io/connect-name": "sc",
}
SERVER = b.pod("server", group="app", cpu="2", memory=None, node="n1", labels=CONNECT, started=STARTED)
AFTER_TIMEOUT = scenarios.NOW + datetime.timedelta(seconds=250)  # driver started 310 s before

SCENARIOS = [
    scenarios.Scenario(
        id="spark-hold-blocks-later-job",
        nodes=NODES,
        pods=[DRIVER, OTHER],
        podgroups=[APP, b.podgroup("other", created=LATER)],
        queues=[b.queue()],
        binds={},
        pod_events={"other": ("FailedScheduling", "held for the executors of Spark application(s) ns/app")},
    ),
    scenarios.Scenario(
        id="spark-hold-admits-own-executors",
        nodes=NODES,
        pods=[DRIVER, OTHER]
        + [b.pod(f"exec{i}", group="app", cpu="2", memory=None, labels=EXECUTOR) for i in range(3)],
        podgroups=[APP, b.podgroup("other", created=LATER)],
        queues=[b.queue()],
        binds={"exec0": "*", "exec1": "*", "exec2": "*"},
    ),
    scenarios.Scenario(
        id="spark-connect-server-holds-for-its-executors",
        nodes=NODES,
        pods=[SERVER, OTHER],
        podgroups=[APP, b.podgroup("other", created=LATER)],
        queues=[b.queue()],
        binds={},
        pod_events={"other": ("FailedScheduling", "held for the executors of Spark application(s) ns/app")},
    ),
    scenarios.Scenario(
        id="spark-connect-server-hold-admits-its-executors",
        nodes=NODES,
        pods=[SERVER, OTHER]
        + [b.pod(f"exec{i}", group="app", cpu="2", memory=None, labels=CONNECT_EXECUTOR) for i in range(3)],
        podgroups=[APP, b.podgroup("other", created=LATER)],
        queues=[b.queue()],
        binds={"exec0": "*", "exec1": "*", "exec2": "*"},
    ),
    scenarios.Scenario(
        id="spark-hold-blocks-enqueue-of-later-group",
        nodes=NODES,
        pods=[DRIVER, OTHER],
        podgroups=[APP, b.podgroup("other", min_resources={"cpu": "4"}, created=LATER)],
        queues=[b.queue()],
        phases={"other": "Pending"},
    ),
    scenarios.Scenario(
        id="spark-hold-released-after-timeout",
        nodes=NODES,
        pods=[DRIVER, OTHER],
        podgroups=[APP, b.podgroup("other", min_resources={"cpu": "4"}, created=LATER)],
        queues=[b.queue()],
        now=AFTER_TIMEOUT,
        binds={"other": "*"},
        phases={"other": "Running"},
    ),
    scenarios.Scenario(
        id="spark-hold-timeout-is-configurable",
        nodes=NODES,
        pods=[DRIVER, OTHER],
        podgroups=[APP, b.podgroup("other", created=LATER)],
        queues=[b.queue()],
        spark_timeout=30,
        binds={"other": "*"},
    ),
    scenarios.Scenario(
        id="non-spark-group-holds-nothing-in-allocate",
        nodes=NODES,
        pods=[{**DRIVER, "metadata": {**DRIVER["metadata"], "labels": {}}}, OTHER],
        podgroups=[APP, b.podgroup("other", created=LATER)],
        queues=[b.queue()],
        binds={"other": "*"},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_spark(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)


def test_the_hold_is_set_by_the_plugin_once_the_session_is_built() -> None:
    snap = building.build(nodes=NODES, pods=[DRIVER, OTHER], podgroups=[APP, b.podgroup("other")], queues=[b.queue()])
    ssn, _ = cycle.open_session(snap, configure.default(), scenarios.NOW)
    assert list(ssn.holds.owed) == ["ns/app"]
    assert ssn.holds.total[snap.dims.index("cpu")] == 6000  # 8 cpu owed, the driver holds 2
    bare = session.Session(snap, configure.default(), scenarios.NOW)
    assert bare.holds.owed == {}  # a session alone holds nothing: the hold is the plugin's
