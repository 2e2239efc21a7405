"""``Resource``: an immutable amount of cpu, memory, pods and extended resources. Pure.

Units: ``cpu`` in millicores, ``memory`` in bytes, ``pods`` in pods, every other (scalar)
resource such as ``nvidia.com/gpu`` or ``ephemeral-storage`` in thousandths of its quantity,
so fractional extended resources stay exact integers.

The one policy for missing dimensions: **a dimension a Resource does not list is zero.**
``fits_in`` checks only the dimensions the left side actually asks for (positive amounts), so
asking for no GPU fits a node without GPUs, and asking for one GPU does not. Code that needs
another meaning (a queue ``capability`` that omits memory means "no memory cap") converts at
its boundary instead of adding comparison variants here.
"""

from __future__ import annotations

import dataclasses
import fractions
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from bridge import quantity

__all__ = [
    "CPU",
    "MEMORY",
    "PODS",
    "Resource",
    "Vector",
    "describe",
    "from_vector",
    "human",
    "make",
    "parse",
    "to_api",
    "vector",
]

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"

Vector = npt.NDArray[np.float64]


@dataclasses.dataclass(frozen=True, slots=True)
class Resource:
    """Amounts by dimension name; zero dimensions are dropped so equal values compare equal."""

    amounts: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, amounts: Mapping[str, int]) -> Resource:
        return cls(tuple(sorted((name, int(v)) for name, v in amounts.items() if v)))

    def get(self, name: str) -> int:
        for key, value in self.amounts:
            if key == name:
                return value
        return 0

    @property
    def cpu(self) -> int:
        return self.get(CPU)

    @property
    def memory(self) -> int:
        return self.get(MEMORY)

    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.amounts)

    def is_empty(self) -> bool:
        return not self.amounts

    def __add__(self, other: Resource) -> Resource:
        merged = dict(self.amounts)
        for name, value in other.amounts:
            merged[name] = merged.get(name, 0) + value
        return Resource.of(merged)

    def __sub__(self, other: Resource) -> Resource:
        """Plain subtraction; the result may be negative (an overcommitted node)."""
        merged = dict(self.amounts)
        for name, value in other.amounts:
            merged[name] = merged.get(name, 0) - value
        return Resource.of(merged)

    def fits_in(self, other: Resource) -> bool:
        """Every positive dimension of ``self`` is at most the same dimension of ``other``."""
        return all(value <= other.get(name) for name, value in self.amounts if value > 0)

    def scaled(self, factor: float) -> Resource:
        return Resource.of({name: int(value * factor) for name, value in self.amounts})

    def clamped(self) -> Resource:
        """Negative dimensions raised to zero ("what is still owed")."""
        return Resource.of({name: max(0, value) for name, value in self.amounts})

    def __str__(self) -> str:
        return ", ".join(f"{name}={describe(name, value)}" for name, value in self.amounts) or "nothing"

    def human(self) -> str:
        """As a person reads it: "cpu 40, memory 64Gi, nvidia.com/gpu 1" (see ``human``)."""
        return ", ".join(f"{name} {human(name, value)}" for name, value in self.amounts) or "nothing"


def describe(name: str, value: int) -> str:
    """A human-readable amount for messages."""
    if name == CPU:
        return f"{value}m"
    if name == MEMORY:
        return f"{value / 2**20:g}Mi" if value % 2**20 else f"{value // 2**20}Mi"
    if name == PODS:
        return str(value)
    return f"{value / 1000:g}"


def human(name: str, value: int | float) -> str:
    """One amount in canonical units (see the module docstring) as a person reads it
    (:func:`bridge.quantity.amount`): cpu "40" or "500m", memory and byte-sized scalars "64Gi",
    other scalars "1"."""
    canonical = fractions.Fraction(round(value))
    return quantity.amount(name, canonical if name in (MEMORY, PODS) else canonical / 1000)


def make(*, cpu: int = 0, memory: int = 0, pods: int = 0, scalars: Mapping[str, int] | None = None) -> Resource:
    """A Resource from canonical units (millicores, bytes, pods, thousandths)."""
    return Resource.of({CPU: cpu, MEMORY: memory, PODS: pods, **(scalars or {})})


def parse(resource_list: Mapping[str, str | int | float] | None) -> Resource:
    """A Resource from a Kubernetes ResourceList (``{"cpu": "500m", "memory": "1Gi"}``)."""
    amounts: dict[str, int] = {}
    for name, raw in (resource_list or {}).items():
        if name in (MEMORY, PODS):
            amounts[name] = quantity.to_int(raw)
        else:  # cpu and scalar resources are kept in thousandths
            amounts[name] = quantity.to_milli(raw)
    return Resource.of(amounts)


def to_api(resource: Resource) -> dict[str, str]:
    """A Kubernetes ResourceList for status fields."""
    out: dict[str, str] = {}
    for name, value in resource.amounts:
        if name in (MEMORY, PODS):
            out[name] = str(value)
        elif value % 1000 == 0:
            out[name] = str(value // 1000)
        else:
            out[name] = f"{value}m"
    return out


def vector(resource: Resource, dims: Sequence[str]) -> Vector:
    """The amounts in the order of ``dims``; dimensions outside ``dims`` are dropped."""
    index = {name: i for i, name in enumerate(dims)}
    out = np.zeros(len(dims), dtype=np.float64)
    for name, value in resource.amounts:
        if name in index:
            out[index[name]] = value
    return out


def from_vector(values: Iterable[float], dims: Sequence[str]) -> Resource:
    return Resource.of({name: round(v) for name, v in zip(dims, values, strict=True)})
