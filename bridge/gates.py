"""Our scheduling gates are lifted only by us: a ValidatingAdmissionPolicy. Pure.

``keys.QUEUE_GATE`` (native backend: kube-scheduler places a pod once its queue admitted the
group) and ``keys.SPARK_GATE`` (a spark-submit driver waits for its complete PodGroup) hold a pod
until volcano-bridge decides. The usual pod ``patch`` right would let a namespace user lift them
and skip the queue, so ``objects(name)`` returns what the apiserver itself enforces
(``admissionregistration.k8s.io/v1``, no webhook involved, so it holds while ours is down): a
``ValidatingAdmissionPolicy`` and its ``ValidatingAdmissionPolicyBinding`` (``Deny``) that refuse,
on an UPDATE of a pod by anyone who may not :data:`LIFT`,

- removing either gate;
- adding, changing or removing ``spec.schedulingGroup`` (the native PodGroup a pod joins, which we
  set at admission);
- changing ``schedulerName``, ``keys.GROUP_NAME`` or ``keys.QUEUE_NAME`` of a pod still behind
  one of our gates.

Who is "us" is an RBAC question, not a name in the policy: :data:`LIFT` (verb ``lift`` on
``schedulinggates`` in the ``vbridge.io`` group, cluster-wide; :func:`lifter_rule`) is granted to
our ServiceAccounts by the chart and held by cluster admins (``system:masters``, which is how
``vbridge up`` runs every component). A namespace-scoped Role cannot grant it. CREATE is not
checked: a new pod may carry any gate, and a pod made outside any group is outside every queue, as
on every backend.
"""

from __future__ import annotations

from typing import Any

from bridge import keys

__all__ = ["API", "GATES", "LIFT", "LOCAL_NAME", "lifter_rule", "objects"]

GATES = (keys.QUEUE_GATE, keys.SPARK_GATE)
# The permission that lets a subject lift our gates: (apiGroup, resource, verb).
LIFT = ("vbridge.io", "schedulinggates", "lift")
LOCAL_NAME = "volcano-bridge-scheduling-gates"  # the local control plane's copy (the chart's is per release)
API = "admissionregistration.k8s.io/v1"


def lifter_rule() -> dict[str, Any]:
    """The ClusterRole rule that grants :data:`LIFT`."""
    group, resource, verb = LIFT
    return {"apiGroups": [group], "resources": [resource], "verbs": [verb]}


def _quoted(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(f"'{i}'" for i in items) + "]"


def _gates(pod: str) -> str:
    return f"has({pod}.spec.schedulingGates) ? {pod}.spec.schedulingGates.map(g, g.name) : []"


def _annotation(pod: str, key: str) -> str:
    """The annotation as a list of at most one value, so that absent and empty differ."""
    return (
        f"(has({pod}.metadata.annotations) && '{key}' in {pod}.metadata.annotations)"
        f" ? [{pod}.metadata.annotations['{key}']] : []"
    )


def _optional(pod: str, field: str) -> str:
    return f"has({pod}.spec.{field}) ? [{pod}.spec.{field}] : []"


_HELD = f"has(oldObject.spec.schedulingGates) && oldObject.spec.schedulingGates.exists(g, g.name in {_quoted(GATES)})"
_GROUPED = "has(object.spec.schedulingGroup) || has(oldObject.spec.schedulingGroup)"
_WHO = "request.userInfo.username"


def _variables() -> list[dict[str, str]]:
    group, resource, verb = LIFT
    pairs = [
        ("lifter", f"authorizer.group('{group}').resource('{resource}').check('{verb}').allowed()"),
        ("held", f"({_gates('oldObject')}).filter(n, n in {_quoted(GATES)})"),
        ("kept", _gates("object")),
        ("lifted", "variables.held.filter(n, !(n in variables.kept))"),
        ("sameGroup", f"({_optional('oldObject', 'schedulingGroup')}) == ({_optional('object', 'schedulingGroup')})"),
        (
            "sameRouting",
            f"({_optional('oldObject', 'schedulerName')}) == ({_optional('object', 'schedulerName')})"
            f" && ({_annotation('oldObject', keys.GROUP_NAME)}) == ({_annotation('object', keys.GROUP_NAME)})"
            f" && ({_annotation('oldObject', keys.QUEUE_NAME)}) == ({_annotation('object', keys.QUEUE_NAME)})",
        ),
    ]
    return [{"name": n, "expression": e} for n, e in pairs]


def _validations() -> list[dict[str, str]]:
    pod = "object.metadata.namespace + '/' + object.metadata.name"
    rights = f"(RBAC verb {LIFT[2]} on {LIFT[1]}.{LIFT[0]})"
    return [
        {
            "expression": "variables.lifter || size(variables.lifted) == 0",
            "reason": "Forbidden",
            "messageExpression": (
                f"'pod ' + {pod} + ': the scheduling gate ' + variables.lifted.join(', ') + ' is lifted only by"
                " volcano-bridge (the queue gate when the queue admits the group, the Spark driver gate when its"
                f" PodGroup is complete); ' + {_WHO} + ' may not remove it {rights}'"
            ),
        },
        {
            "expression": "variables.lifter || variables.sameGroup",
            "reason": "Forbidden",
            "messageExpression": (
                f"'pod ' + {pod} + ': spec.schedulingGroup (the native PodGroup a pod joins) is set only by"
                f" volcano-bridge at admission; ' + {_WHO} + ' may not add, change or remove it {rights}'"
            ),
        },
        {
            "expression": "variables.lifter || size(variables.held) == 0 || variables.sameRouting",
            "reason": "Forbidden",
            "messageExpression": (
                f"'pod ' + {pod} + ' is held by the scheduling gate ' + variables.held.join(', ') + ': its"
                f" schedulerName and its {keys.GROUP_NAME} and {keys.QUEUE_NAME} annotations stay as admitted until"
                f" volcano-bridge lifts the gate; ' + {_WHO} + ' may not change them {rights}'"
            ),
        },
    ]


def objects(name: str = LOCAL_NAME, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The policy and its binding, both named ``name``."""

    def meta() -> dict[str, Any]:
        return {"name": name, **({"labels": dict(labels)} if labels else {})}

    policy = {
        "apiVersion": API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": meta(),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["pods"]}
                ]
            },
            # only pods behind one of our gates, or in a native group, are looked at further
            "matchConditions": [{"name": "gated-or-grouped", "expression": f"({_HELD}) || {_GROUPED}"}],
            "variables": _variables(),
            "validations": _validations(),
        },
    }
    binding = {
        "apiVersion": API,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": meta(),
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    return [policy, binding]
