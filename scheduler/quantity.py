"""Kubernetes quantities ("500m", "1Gi", "2", "1e3", "512Mi") as exact fractions. Pure.

The grammar is the one of ``k8s.io/apimachinery/pkg/api/resource``: a signed decimal number
followed by a binary suffix (Ki..Ei), a decimal suffix (n, u, m, "", k, M, G, T, P, E) or a
decimal exponent (e3, E-2). Parsing is exact (``fractions.Fraction``) because float rounding
would make "0.1" CPUs compare unequal to "100m".
"""

from __future__ import annotations

import fractions
import math
import re

from scheduler import errors

__all__ = ["parse", "to_int", "to_milli"]

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


def parse(value: str | int | float) -> fractions.Fraction:
    """The exact value of a quantity; raises :class:`errors.QuantityError` if it is malformed."""
    if isinstance(value, bool):
        raise errors.QuantityError(f"not a quantity: {value!r}")
    if isinstance(value, int | float):
        return fractions.Fraction(value)
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


def to_milli(value: str | int | float) -> int:
    """The quantity in thousandths, rounded up as the API server does ("0.1" → 100)."""
    return math.ceil(parse(value) * 1000)


def to_int(value: str | int | float) -> int:
    """The quantity as a whole number, rounded up ("1.5Ki" → 1536, "100m" → 1)."""
    return math.ceil(parse(value))
