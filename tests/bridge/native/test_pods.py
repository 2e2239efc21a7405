"""``bridge.native.pods``: the stamp every pod of a native group gets at admission."""

from __future__ import annotations

from bridge import keys
from bridge.native import pods as native_pods


def test_a_pod_on_ours_or_none_goes_to_kube_scheduler_joined_and_gated() -> None:
    for current in (None, "", "default-scheduler", "volcano"):
        spec = {"containers": []} if current is None else {"schedulerName": current, "containers": []}
        out = native_pods.stamp(spec, "g", ours="volcano")
        assert out["schedulerName"] == "default-scheduler"
        assert out["schedulingGroup"] == {"podGroupName": "g"}
        assert out["schedulingGates"] == [{"name": keys.QUEUE_GATE}]
        assert native_pods.stamped(out) and not native_pods.stamped(spec)


def test_another_scheduler_the_user_named_is_kept() -> None:
    assert native_pods.stamp({"schedulerName": "my-sched"}, "g", ours="volcano")["schedulerName"] == "my-sched"


def test_the_gate_is_added_once_and_other_gates_are_kept() -> None:
    spec = {"schedulingGates": [{"name": keys.SPARK_GATE}]}
    once = native_pods.stamp(spec, "g", ours="volcano")
    assert once["schedulingGates"] == [{"name": keys.SPARK_GATE}, {"name": keys.QUEUE_GATE}]
    assert native_pods.stamp(once, "g", ours="volcano") == once
    assert spec == {"schedulingGates": [{"name": keys.SPARK_GATE}]}  # the input is not changed
