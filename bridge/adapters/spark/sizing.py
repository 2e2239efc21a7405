"""Driver and executor resources by Spark's rules. Pure.

Memory strings are JVM sizes (``512m`` = 512 MiB, ``1g`` = 1 GiB; no unit means MiB for these
settings). Overhead = the explicit ``memoryOverhead``, else max(factor × memory, minimum) with
factor ``memoryOverheadFactor`` or 0.1 for JVM and 0.4 for Python/R jobs, and minimum 384 MiB.
Executors add ``spark.executor.pyspark.memory`` and, when enabled, off-heap memory.

``role`` reads one role from Spark's conf keys, with a SparkApplication's own fields first; it is
the one reading of the conf for both paths (SparkApplications and spark-submit drivers).
Malformed values raise ``errors.InvalidObjectError`` naming the key.
"""

from __future__ import annotations

import dataclasses
import fractions
import math
import re
from collections.abc import Mapping
from typing import Any

from bridge import errors, quantity

__all__ = [
    "MIB",
    "MIN_OVERHEAD_MIB",
    "PodSize",
    "Role",
    "conf_int",
    "executor_count",
    "executors_from_conf",
    "jvm_mib",
    "pod_size",
    "requests",
    "role",
    "total",
]

MIB = 2**20
MIN_OVERHEAD_MIB = 384
_JVM = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]b?|b)?\s*$", re.IGNORECASE)
_MAX_MIB = 2**40  # 1 EiB: past it a size is a typo, and floats lose whole MiB
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
    mib = float(number) * _UNIT_MIB[(unit or "m")[0].lower()]
    if not math.isfinite(mib) or mib > _MAX_MIB:
        raise errors.QuantityError(f"{what}: {str(raw)[:40]!r} is larger than any machine (at most 1 EiB)")
    return math.ceil(mib)


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


def _number(value: Any, what: str) -> float | None:
    if value in (None, ""):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise errors.InvalidObjectError(f"{what} must be a number, got {value!r}") from None
    except OverflowError:  # an integer past a float's range
        out = math.inf
    if not math.isfinite(out):
        raise errors.QuantityError(f"{what} must be a finite number, got {str(value)[:40]!r}")
    return out


def role(conf: Mapping[str, str], name: str, given: Mapping[str, Any] | None = None) -> Role:
    """Role ``name`` (``driver`` or ``executor``) as Spark sizes it.

    ``given`` holds a SparkApplication's fields for the role (``memory``, ``memoryOverhead``,
    ``memoryOverheadFactor``, ``cores``, ``coreRequest``, ``gpu``); they outrank the conf.
    """
    given = given or {}
    executor = name == "executor"
    factor = (
        given.get("memoryOverheadFactor")
        or conf.get(f"spark.{name}.memoryOverheadFactor")
        or conf.get("spark.kubernetes.memoryOverheadFactor")
    )
    off_heap = conf.get("spark.memory.offHeap.size") if conf.get("spark.memory.offHeap.enabled") == "true" else None
    gpu = given.get("gpu") or {}
    gpus = {}
    if gpu.get("name"):
        try:
            gpus = {str(gpu["name"]): int(gpu.get("quantity", 0))}
        except (TypeError, ValueError, OverflowError):
            got = gpu.get("quantity")
            raise errors.InvalidObjectError(f"{name} gpu.quantity must be an integer, got {got!r}") from None
    return Role(
        memory=given.get("memory") or conf.get(f"spark.{name}.memory"),
        overhead=given.get("memoryOverhead") or conf.get(f"spark.{name}.memoryOverhead"),
        overhead_factor=_number(factor, "memoryOverheadFactor"),
        min_overhead=conf.get(f"spark.{name}.minMemoryOverhead"),
        cores=given.get("cores") or conf.get(f"spark.{name}.cores"),
        core_request=given.get("coreRequest") or conf.get(f"spark.kubernetes.{name}.request.cores"),
        pyspark_memory=conf.get("spark.executor.pyspark.memory") if executor else None,
        off_heap=off_heap if executor else None,
        gpus=gpus,
    )


def conf_int(conf: Mapping[str, str], key: str) -> int | None:
    """A non-negative integer setting of Spark's conf; None when unset."""
    raw = conf.get(key)
    if raw in (None, ""):
        return None
    try:
        value = int(str(raw))
    except ValueError:
        value = -1
    if value < 0:
        raise errors.InvalidObjectError(f"{key} must be a non-negative integer, got {raw!r}")
    return value


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
        scaled = factor * memory
        if scaled > _MAX_MIB:
            raise errors.QuantityError(
                f"{what} memoryOverheadFactor {factor:g} makes an overhead larger than any machine"
            )
        overhead = max(int(scaled), floor)
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


def requests(size: PodSize) -> dict[str, fractions.Fraction]:
    """A pod size as the amounts ``bridge.podresources`` sums (to add it to a pod's own requests)."""
    out = {"cpu": fractions.Fraction(size.cpu_milli, 1000), "memory": fractions.Fraction(size.memory_mib * MIB)}
    out.update({name: fractions.Fraction(amount) for name, amount in size.extended})
    return out


def executors_from_conf(conf: Mapping[str, str]) -> list[PodSize]:
    """N executors as Spark will size them from a driver's spark.properties (none when N is 0)."""
    count = executor_count(
        instances=conf_int(conf, "spark.executor.instances"),
        dynamic=conf.get("spark.dynamicAllocation.enabled") == "true",
        initial=conf_int(conf, "spark.dynamicAllocation.initialExecutors"),
        minimum=conf_int(conf, "spark.dynamicAllocation.minExecutors"),
    )
    non_jvm = conf.get("spark.kubernetes.resource.type", "java").lower() in ("python", "r")
    return [pod_size(role(conf, "executor"), non_jvm=non_jvm, what="executor").times(count)] if count else []
