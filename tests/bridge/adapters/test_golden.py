"""Golden translation cases: input object (+ cluster facts) → expected PodGroup and JSON Patch.

Each file in ``golden/`` holds ``input``, optional ``context`` and ``expected``: either
``{podgroup, patch}``, ``{error: <substring>}`` or ``null`` (not ours: admitted unchanged).
Regenerate after an intended change with ``VBRIDGE_UPDATE_GOLDEN=1 pytest tests/bridge/adapters``
and review the diff: the files are the specification.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Any

import pytest
import yaml

from bridge import errors, patching, queues
from bridge.adapters import base, registry

GOLDEN = pathlib.Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.yaml"))


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
        conf=raw.get("conf"),
        template=raw.get("template"),
    )


def run(case: dict[str, Any]) -> Any:
    obj, ctx = case["input"], _context(case.get("context"))
    adapters = registry.for_object(obj)
    if case.get("adapter"):
        adapters = [a for a in adapters if a.registration.name == case["adapter"]]
    assert len(adapters) == 1, f"expected one adapter for {obj.get('apiVersion')} {obj.get('kind')}, got {adapters}"
    try:
        result = adapters[0].translate(obj, ctx)
    except errors.InvalidObjectError as exc:
        return {"error": str(exc)}
    if result is None:
        return None
    again = adapters[0].translate(result.desired, ctx)
    assert again is None or patching.diff(result.desired, again.desired) == [], "second pass must not patch"
    return {"podgroup": result.podgroup, "patch": patching.diff(obj, result.desired)}


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
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


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_admission_gets_the_same_object_without_building_the_group(path: pathlib.Path) -> None:
    """At admission (``want_podgroup=False``) an adapter may skip the group, never change the object."""
    case = yaml.safe_load(path.read_text())
    ctx = _context(case.get("context"))
    admission_ctx = dataclasses.replace(ctx, want_podgroup=False)
    [adapter] = [
        a
        for a in registry.for_object(case["input"])
        if not case.get("adapter") or a.registration.name == case["adapter"]
    ]

    def outcome(c: base.Context) -> Any:
        try:
            result = adapter.translate(case["input"], c)
        except errors.InvalidObjectError as exc:
            return ("error", str(exc))
        return None if result is None else ("patch", patching.diff(case["input"], result.desired), result.warnings)

    assert outcome(admission_ctx) == outcome(ctx)
