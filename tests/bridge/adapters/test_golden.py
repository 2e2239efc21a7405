"""Golden translation cases: input object (+ cluster facts) → expected PodGroup and JSON Patch.

Each file in ``golden/`` holds ``input``, optional ``context`` and ``expected``: either
``{podgroup, patch}``, ``{error: <substring>}`` or ``null`` (not ours: admitted unchanged).
``patch`` turns the input into the object as admitted (``adapter.admit``); ``podgroup`` is
``adapter.podgroup`` of the admitted object, what its reconciler makes.

A case whose context names a spark-submit driver's ``conf`` (and ``template``) follows the
driver through its reconciler too: ``podgroup`` is ``spark.driver.podgroup`` from that conf,
and ``patch`` is the driver as it ends up once its group is complete (admitted, gate lifted).
Cases under ``golden/native/`` run with ``context.backend: native`` (the same inputs as their
namesakes here): ``patch`` adds the native stamps (``bridge.native.pods``), and ``native`` holds
the ``Workload`` and ``PodGroup`` (``scheduling.k8s.io/v1beta1``) made from ``podgroup``
(``bridge.native.workloads``; a staged group's other stages' PodGroups as ``later_podgroups``);
for a Volcano Job, whose pods our controller makes, ``pod`` is the
first pod's spec (``vcjob.pods.build``).

Regenerate after an intended change with ``VBRIDGE_UPDATE_GOLDEN=1 pytest tests/bridge/adapters``
and review the diff: the files are the specification.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

import pytest
import yaml

from bridge import defaults, errors, patching, queues
from bridge.adapters import base, registry
from bridge.adapters.spark import driver
from bridge.adapters.vcjob import pods, spec
from bridge.native import workloads as native_workloads

GOLDEN = pathlib.Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.yaml")) + sorted((GOLDEN / "native").glob("*.yaml"))
IDS = [str(p.relative_to(GOLDEN).with_suffix("")) for p in CASES]


def _context(raw: dict[str, Any] | None) -> base.Context:
    raw = raw or {}
    qs = raw.get("queues", {"default": {}})
    return base.Context(
        namespace=raw.get("namespace", "default"),
        namespace_labels=raw.get("namespaceLabels", {}),
        namespace_annotations=raw.get("namespaceAnnotations", {}),
        queues={
            name: queues.QueueFacts(state=q.get("state", "Open"), allowed=tuple(q.get("allowed", ())))
            for name, q in qs.items()
        },
        priorities=raw.get("priorities", {}),
        scheduler_name=raw.get("schedulerName", "volcano"),
        backend=raw.get("backend", "volcano"),
        user=raw.get("user"),
    )


def _adapter(case: dict[str, Any]) -> base.Adapter:
    obj = case["input"]
    adapters = registry.for_object(obj)
    if case.get("adapter"):
        adapters = [a for a in adapters if a.registration.name == case["adapter"]]
    assert len(adapters) == 1, f"expected one adapter for {obj.get('apiVersion')} {obj.get('kind')}, got {adapters}"
    return adapters[0]


def _admission(adapter: base.Adapter, obj: dict[str, Any], ctx: base.Context) -> Any:
    """What admission alone answers: an error, None (not ours) or the patch and warnings."""
    try:
        admitted = adapter.admit(obj, ctx)
    except errors.InvalidObjectError as exc:
        return ("error", str(exc))
    return None if admitted is None else ("patch", patching.diff(obj, admitted.desired), admitted.warnings)


def run(case: dict[str, Any]) -> Any:
    obj, raw_ctx = case["input"], case.get("context") or {}
    adapter, ctx = _adapter(case), _context(raw_ctx)
    try:
        admitted = adapter.admit(obj, ctx)
        if admitted is None:
            return None
        final = admitted.desired
        if "conf" in raw_ctx:  # a spark-submit driver, completed by its reconciler
            group = driver.podgroup(final, ctx, conf=raw_ctx["conf"], template=raw_ctx.get("template"))
            final = driver.without_gate(final)
        else:
            group = adapter.podgroup(final, ctx)
    except errors.InvalidObjectError as exc:
        return {"error": str(exc)}
    again = adapter.admit(admitted.desired, ctx)
    assert again is None or patching.diff(admitted.desired, again.desired) == [], "second pass must not patch"
    out = {"podgroup": group, "patch": patching.diff(obj, final)}
    if ctx.native and group is not None:
        out["native"] = {"workload": native_workloads.workload(group), "podgroup": native_workloads.podgroup(group)}
        if later := native_workloads.podgroups(group)[1:]:  # a staged group's later stages
            out["native"]["later_podgroups"] = later
        if obj.get("apiVersion") == defaults.BATCH_API:
            job = spec.defaulted(final, scheduler_name=ctx.scheduler_name)
            first = spec.tasks(job)[0].name
            out["pod"] = pods.build(job, task=first, index=0, native=True)["spec"]
    return out


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_golden(path: pathlib.Path) -> None:
    case = yaml.safe_load(path.read_text())
    got = run(case)
    if os.environ.get("VBRIDGE_UPDATE_GOLDEN") == "1":
        case["expected"] = got
        path.write_text(yaml.safe_dump(case, sort_keys=False, width=120))
    expected = case["expected"]
    if isinstance(expected, dict) and "error" in expected and isinstance(got, dict) and "error" in got:
        assert expected["error"] in got["error"]
    else:
        assert got == expected


def test_every_adapter_has_golden_cases() -> None:
    covered = set()
    for path in CASES:
        case = yaml.safe_load(path.read_text())
        covered |= {
            a.registration.name
            for a in registry.for_object(case["input"])
            if not case.get("adapter") or a.registration.name == case["adapter"]
        }
    assert covered == {a.registration.name for a in registry.ADAPTERS}


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_admission_alone_gives_the_full_translations_verdict_and_object(path: pathlib.Path) -> None:
    """Admission builds no group, yet denies, ignores and patches exactly as the full translation.

    The spark-submit driver completed by its reconciler is the one case whose end state differs
    from its admission: it is admitted gated.
    """
    case = yaml.safe_load(path.read_text())
    adapter, ctx = _adapter(case), _context(case.get("context"))
    full, alone = run(case), _admission(adapter, case["input"], ctx)
    if full is None or "error" in full:
        assert alone == (None if full is None else ("error", full["error"]))
        return
    verdict, patch, _ = alone
    assert verdict == "patch"
    if "conf" in (case.get("context") or {}):
        gated = patching.diff(case["input"], driver.without_gate(adapter.admit(case["input"], ctx).desired))
        assert gated == full["patch"] and any(op["path"].startswith("/spec/schedulingGates") for op in patch)
    else:
        assert patch == full["patch"]
