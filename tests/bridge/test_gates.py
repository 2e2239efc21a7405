"""``bridge.gates``: the policy's shape. What its CEL decides is shown on the real apiserver
(``tests/integration/native/test_gate_policy.py``, ``tests/integration/test_gate_policy.py``);
every local control plane also has the apiserver type-check it at start (``cluster.guard_gates``)."""

from __future__ import annotations

from bridge import gates, keys


def test_both_of_our_gates_and_nothing_else_are_guarded() -> None:
    assert set(gates.GATES) == {keys.QUEUE_GATE, keys.SPARK_GATE}
    policy, _ = gates.objects()
    [condition] = policy["spec"]["matchConditions"]
    for gate in gates.GATES:
        assert f"'{gate}'" in condition["expression"]
    # a user's own gate is not ours: only UPDATEs of pods (not their subresources) are looked at
    assert policy["spec"]["matchConstraints"]["resourceRules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["pods"]}
    ]
    assert policy["spec"]["failurePolicy"] == "Fail"


def test_the_routing_fields_of_a_gated_pod_are_compared_old_to_new() -> None:
    policy, _ = gates.objects()
    routing = next(v["expression"] for v in policy["spec"]["variables"] if v["name"] == "sameRouting")
    for key in (keys.GROUP_NAME, keys.QUEUE_NAME):
        assert f"oldObject.metadata.annotations['{key}']" in routing
        assert f"object.metadata.annotations['{key}']" in routing
    assert "oldObject.spec.schedulerName" in routing


def test_every_rule_gives_way_to_the_lift_permission_and_names_it() -> None:
    group, resource, verb = gates.LIFT
    policy, _ = gates.objects()
    lifter = next(v["expression"] for v in policy["spec"]["variables"] if v["name"] == "lifter")
    assert lifter == f"authorizer.group('{group}').resource('{resource}').check('{verb}').allowed()"
    assert gates.lifter_rule() == {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
    for rule in policy["spec"]["validations"]:
        assert rule["expression"].startswith("variables.lifter || ")
        assert rule["reason"] == "Forbidden"
        assert (
            f"{resource}.{group}" in rule["messageExpression"]
            and "request.userInfo.username" in rule["messageExpression"]
        )


def test_the_binding_denies_with_the_named_policy_and_labels_are_not_shared() -> None:
    labels = {"app": "x"}
    policy, binding = gates.objects("mine", labels=labels)
    assert policy["metadata"] == binding["metadata"] == {"name": "mine", "labels": labels}
    assert binding["spec"] == {"policyName": "mine", "validationActions": ["Deny"]}
    policy["metadata"]["labels"]["changed"] = "y"
    assert "changed" not in binding["metadata"]["labels"] and "changed" not in labels
    assert gates.objects()[0]["metadata"] == {"name": gates.LOCAL_NAME}
