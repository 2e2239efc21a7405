"""Driver and executor resources by Spark's rules. Pure.

Memory strings are JVM sizes (``512m`` = 512 MiB, ``1g`` = 1 GiB; no unit means MiB for these
settings). Overhead = the explicit ``memoryOverhead``, else max(factor × memory, minimum) with
factor ``memoryOverheadFactor`` or 0.1 for JVM and 0.4 for Python/R jobs, and minimum 384 MiB.
Executors add ``spark.executor.pyspark.memory`` and, when enabled, off-heap memory.
"""

from __future__ import annotations

import dataclasses
import math
import re

from bridge import errors, quantity

__all__ = ["PodSize", "Role", "executor_count", "jvm_mib", "pod_size", "total"]

MIB = 2**20
MIN_OVERHEAD_MIB = 384
_JVM = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]b?|b)?\s*$", re.IGNORECASE)
_UNIT_MIB = {"b": 1 / MIB, "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024**2, "p": 1024**3}


def jvm_mib(value: str | int | None, *, default: str | None = None, what: str = "memory") -> int:
    """A JVM memory string in MiB (rounded up): "512m" → 512, "1g" → 1024, "2048" → 2048."""
    raw = default if value is None or value == "" else value
    if raw is None:
        return 0
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    match = _JVM.match(str(raw))
    if match is None:
        raise errors.QuantityError(f"{what}: {raw!r} is not a JVM memory size such as 512m or 2g")
    number, unit = match.groups()
    return math.ceil(float(number) * _UNIT_MIB[(unit or "m")[0].lower()])


@dataclasses.dataclass(frozen=True)
class Role:
    """What Spark is told about one pod role (driver or executor)."""

    memory: str | None = None  # spark.{driver,executor}.memory
    overhead: str | None = None  # spark.{driver,executor}.memoryOverhead
    overhead_factor: float | None = None
    min_overhead: str | None = None  # spark.{driver,executor}.minMemoryOverhead (Spark 4)
    cores: str | int | None = None  # spark.{driver,executor}.cores
    core_request: str | None = None  # spark.kubernetes.{driver,executor}.request.cores
    pyspark_memory: str | None = None  # executors only
    off_heap: str | None = None  # spark.memory.offHeap.size when offHeap is enabled
    gpus: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class PodSize:
    cpu_milli: int
    memory_mib: int
    extended: tuple[tuple[str, int], ...] = ()

    def times(self, n: int) -> PodSize:
        return PodSize(self.cpu_milli * n, self.memory_mib * n, tuple((k, v * n) for k, v in self.extended))


def pod_size(role: Role, *, non_jvm: bool, what: str) -> PodSize:
    memory = jvm_mib(role.memory, default="1g", what=f"{what} memory")
    if role.overhead not in (None, ""):
        overhead = jvm_mib(role.overhead, what=f"{what} memoryOverhead")
    else:
        factor = role.overhead_factor if role.overhead_factor is not None else (0.4 if non_jvm else 0.1)
        if factor < 0:
            raise errors.InvalidObjectError(f"{what} memoryOverheadFactor must not be negative, got {factor}")
        floor = jvm_mib(role.min_overhead, default=str(MIN_OVERHEAD_MIB), what=f"{what} minMemoryOverhead")
        overhead = max(int(factor * memory), floor)
    extra = jvm_mib(role.pyspark_memory, what=f"{what} pyspark memory") + jvm_mib(role.off_heap, what="offHeap")
    if role.core_request not in (None, ""):
        cpu = quantity.to_milli(str(role.core_request))
    else:
        cores = role.cores if role.cores not in (None, "") else 1
        cpu = quantity.to_milli(str(cores))
    if cpu <= 0 or memory <= 0:
        raise errors.InvalidObjectError(f"{what} cores and memory must be positive")
    return PodSize(cpu, memory + overhead + extra, tuple(sorted(role.gpus.items())))


def executor_count(
    *, instances: int | None, dynamic: bool, initial: int | None, minimum: int | None, default: int = 2
) -> int:
    """Executors the gang must hold room for: instances, or with dynamic allocation the largest start size."""
    base = instances if instances is not None else default
    if dynamic:
        base = max(base if instances is not None else 0, initial or 0, minimum or 0)
    if base < 0:
        raise errors.InvalidObjectError(f"executor count must not be negative, got {base}")
    return base


def total(sizes: list[PodSize]) -> dict[str, str]:
    """minResources for a list of pod sizes, in canonical quantities."""
    cpu = sum(s.cpu_milli for s in sizes)
    mem = sum(s.memory_mib for s in sizes)
    out = {"cpu": quantity.format_cpu(cpu), "memory": quantity.format_memory(mem * MIB)}
    extended: dict[str, int] = {}
    for s in sizes:
        for name, amount in s.extended:
            extended[name] = extended.get(name, 0) + amount
    out.update({name: str(amount) for name, amount in sorted(extended.items()) if amount})
    return out
