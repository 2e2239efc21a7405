"""Kubernetes quantities ("500m", "1Gi", "2", "1e3", "512Mi") as exact fractions. Pure.

The grammar is the one of ``k8s.io/apimachinery/pkg/api/resource``: a signed decimal number
followed by a binary suffix (Ki..Ei), a decimal suffix (n, u, m, "", k, M, G, T, P, E) or a
decimal exponent (e3, E-2). Parsing is exact (``fractions.Fraction``) because float rounding
would make "0.1" CPUs compare unequal to "100m".
"""

from __future__ import annotations

import fractions
import functools
import math
import re

from bridge import errors

__all__ = ["format_cpu", "format_memory", "parse", "to_int", "to_milli"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": fractions.Fraction(1, 10**9),
    "u": fractions.Fraction(1, 10**6),
    "m": fractions.Fraction(1, 10**3),
    "": fractions.Fraction(1),
    "k": fractions.Fraction(10**3),
    "M": fractions.Fraction(10**6),
    "G": fractions.Fraction(10**9),
    "T": fractions.Fraction(10**12),
    "P": fractions.Fraction(10**15),
    "E": fractions.Fraction(10**18),
}
# The exponent alternative comes first: "1E3" is 1000, while a bare "1E" is one exa.
_PATTERN = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$")


def parse(value: str | int | float | fractions.Fraction) -> fractions.Fraction:
    """The exact value of a quantity; raises :class:`errors.QuantityError` if it is malformed."""
    if isinstance(value, bool):
        raise errors.QuantityError(f"not a quantity: {value!r}")
    if isinstance(value, int | float | fractions.Fraction):
        return fractions.Fraction(value)
    if not isinstance(value, str):
        raise errors.QuantityError(f"not a quantity: {value!r}")
    return _parse_text(value)


@functools.lru_cache(maxsize=4096)  # the same few quantities recur in every object
def _parse_text(value: str) -> fractions.Fraction:
    match = _PATTERN.match(value.strip())
    if match is None:
        raise errors.QuantityError(f"not a Kubernetes quantity: {value!r}")
    number, exponent, suffix = match.groups()
    base = fractions.Fraction(number)
    if exponent is not None:
        return base * fractions.Fraction(10) ** int(exponent)
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    return base * _DECIMAL[suffix or ""]


def to_milli(value: str | int | float | fractions.Fraction) -> int:
    """The quantity in thousandths, rounded up as the API server does ("0.1" → 100)."""
    return math.ceil(parse(value) * 1000)


def to_int(value: str | int | float | fractions.Fraction) -> int:
    """The quantity as a whole number, rounded up ("1.5Ki" → 1536, "100m" → 1)."""
    return math.ceil(parse(value))


def format_cpu(milli: int) -> str:
    """Millicores as the API prints them: "2" for 2000, "1500m" for 1500."""
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def format_memory(num_bytes: int) -> str:
    """Bytes in the largest binary unit that divides them exactly: "1792Mi", "2Gi", "1000"."""
    for suffix, size in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if num_bytes and num_bytes % size == 0:
            return f"{num_bytes // size}{suffix}"
    return str(num_bytes)
