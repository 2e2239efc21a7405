"""What a pod template asks for, summed the way the scheduler counts it. Pure.

A container's request is its ``requests`` entry, or its ``limits`` entry when the request is
absent (the apiserver defaults one to the other). A pod asks for the larger of the sum of its
containers and its largest init container, per resource, plus its overhead.
"""

from __future__ import annotations

import fractions
from collections.abc import Iterable, Mapping
from typing import Any

from bridge import errors, quantity

__all__ = ["Amounts", "add", "format_list", "pod_requests", "scale", "total"]

Amounts = dict[str, fractions.Fraction]


def _container(c: Mapping[str, Any], what: str) -> Amounts:
    res = c.get("resources") or {}
    merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}
    out: Amounts = {}
    for name, raw in merged.items():
        try:
            out[name] = quantity.parse(raw)
        except errors.QuantityError as exc:
            raise errors.QuantityError(f"{what}: container {c.get('name')!r} {name}: {exc}") from None
    return out


def add(*items: Mapping[str, fractions.Fraction]) -> Amounts:
    out: Amounts = {}
    for item in items:
        for k, v in item.items():
            out[k] = out.get(k, fractions.Fraction(0)) + v
    return out


def pod_requests(spec: Mapping[str, Any], *, what: str = "pod") -> Amounts:
    main = add(*(_container(c, what) for c in spec.get("containers") or []))
    for init in spec.get("initContainers") or []:
        for k, v in _container(init, what).items():
            main[k] = max(main.get(k, fractions.Fraction(0)), v)
    overhead = {k: quantity.parse(v) for k, v in (spec.get("overhead") or {}).items()}
    return add(main, overhead)


def scale(amounts: Mapping[str, fractions.Fraction], n: int) -> Amounts:
    return {k: v * n for k, v in amounts.items()}


def format_list(amounts: Mapping[str, fractions.Fraction]) -> dict[str, str]:
    """A ResourceList in canonical form: cpu in cores or millicores, memory-like in binary units."""
    out: dict[str, str] = {}
    for name, value in sorted(amounts.items()):
        if value <= 0:
            continue
        if name == "cpu":
            out[name] = quantity.format_cpu(quantity.to_milli(value))
        elif name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
            out[name] = quantity.format_memory(quantity.to_int(value))
        else:
            out[name] = (
                str(quantity.to_int(value)) if value.denominator == 1 else quantity.format_cpu(quantity.to_milli(value))
            )
    return out


def total(items: Iterable[Mapping[str, fractions.Fraction]]) -> dict[str, str]:
    return format_list(add(*items))
