"""Kubernetes quantities ("500m", "1Gi", "2", "1e3", "512Mi") as exact fractions. Pure.

The grammar is the one of ``k8s.io/apimachinery/pkg/api/resource``: a signed decimal number
followed by a binary suffix (Ki..Ei), a decimal suffix (n, u, m, "", k, M, G, T, P, E) or a
decimal exponent (e3, E-2). Parsing is exact (``fractions.Fraction``) because float rounding
would make "0.1" CPUs compare unequal to "100m".

Bounded as apimachinery bounds a Quantity, before any arithmetic: a magnitude above
2^63 − 1 (in the unit itself: cores, bytes) is that cap, and a non-zero amount is rounded up to
the nearest nano unit ("you asked for some, you get some"). So a schema-valid "1e400",
"1e30000000" or a 5,000-digit number costs microseconds and yields a finite value, never an
OverflowError, a frozen event loop or a number too long to print.

:func:`bounded` is admission's stricter reading: what apimachinery would not keep as written is
refused, not clamped. Its parser takes any int64 exponent ("1e-999999999") and any number of
digits, then rounds a non-zero amount up to 1n and caps a binary one at 2^63 - 1; the rounding
of a value like "1e-999999999" alone (an inf.Dec of a billion digits) holds kube-apiserver's
CPU for as long as it runs, on every pod made from such a template. So a quantity of more than
``MAX_TEXT`` characters (every value a Quantity holds, sign, 19 + 9 digits, point and exponent,
fits well within), or whose non-zero magnitude is below 1n or above 2^63 - 1, raises
:class:`errors.QuantityError` saying which, before any arithmetic.
"""

from __future__ import annotations

import fractions
import functools
import math
import re
from collections.abc import Mapping

from bridge import errors

__all__ = [
    "BYTE_RESOURCES",
    "MAX",
    "MAX_TEXT",
    "NANO",
    "amount",
    "bounded",
    "describe",
    "format_cpu",
    "format_human",
    "format_memory",
    "parse",
    "to_int",
    "to_milli",
]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_EXPONENT = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_DIGITS = 19  # 2**60 < 10**19: a binary suffix adds fewer than 19 decimal digits
MAX = fractions.Fraction(2**63 - 1)  # apimachinery's cap (resource.maxAllowed)
NANO = fractions.Fraction(1, 10**9)  # the finest amount a Quantity keeps
# Resources counted in bytes: written in binary units ("64Gi") in messages.
BYTE_RESOURCES = ("memory", "ephemeral-storage", "hugepages-")
MAX_TEXT = 64  # characters of a quantity admission takes (see the module)
_ABOVE = "above 2^63 - 1 (9223372036854775807), the most a Quantity holds"
_BELOW = "below 1n (10^-9), the least non-zero amount a Quantity holds"
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
    return _parse_text(value)[0]


def bounded(value: object) -> fractions.Fraction:
    """The exact value of a quantity that apimachinery keeps as written; raises
    :class:`errors.QuantityError` with the reason (``is not a Kubernetes quantity``, ``is above
    2^63 - 1 …``, ``is below 1n …``, ``has N characters …``) for anything else."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise errors.QuantityError("is not a Kubernetes quantity (a string such as 500m or 2Gi, or a number)")
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise errors.QuantityError(f"has {len(value)} characters; a quantity needs at most {MAX_TEXT}")
        amount, why = _parse_text(value)
    else:
        try:
            amount = fractions.Fraction(value)
        except (OverflowError, ValueError):
            raise errors.QuantityError("is not a finite number") from None
        why = _ABOVE if abs(amount) > MAX else _BELOW if 0 < abs(amount) < NANO else ""
    if why:
        raise errors.QuantityError(f"is {why}")
    return amount


def _parse_text(value: str) -> tuple[fractions.Fraction, str]:
    return _parse_short(value) if len(value) <= MAX_TEXT else _parse_long(value)


def _parse_long(value: str) -> tuple[fractions.Fraction, str]:
    """The value (capped, rounded) and why it is not the one written ("" when it is)."""
    match = _PATTERN.match(value.strip())
    if match is None:
        raise errors.QuantityError(f"not a Kubernetes quantity: {value!r}")
    number, exponent, suffix = match.groups()
    sign = -1 if number.startswith("-") else 1
    whole, _, frac = number.lstrip("+-").partition(".")
    whole = whole.lstrip("0")
    if not whole and not frac.strip("0"):
        return fractions.Fraction(0), ""
    multiplier = fractions.Fraction(1)
    if exponent is not None:
        if len(exponent.lstrip("+-").lstrip("0")) > 6:  # |exponent| ≥ a million: far beyond either bound
            return (sign * NANO, _BELOW) if exponent.startswith("-") else (sign * MAX, _ABOVE)
        shift = int(exponent)
    elif suffix in _BINARY:
        shift, multiplier = 0, fractions.Fraction(_BINARY[suffix])
    else:
        shift = _DECIMAL_EXPONENT[suffix or ""]
    # The decimal position of the leading digit decides the bounds without computing the value.
    top = len(whole) - 1 if whole else -(len(frac) - len(frac.lstrip("0"))) - 1
    top += shift
    if top >= 19:  # ≥ 10^19 > 2^63 - 1, whatever the suffix
        return sign * MAX, _ABOVE
    if top + (_BINARY_DIGITS if multiplier != 1 else 0) < -10:  # < 10^-10: rounds up to one nano unit
        return sign * NANO, _BELOW
    # Exact from here, on at most ~50 significant digits: those down to the nano unit of the
    # result; anything further only pushes the value up past its next nano.
    significant = (whole + frac).lstrip("0")
    kept = top + 11 + (_BINARY_DIGITS if multiplier != 1 else 0)
    head, rest = significant[:kept], significant[kept:].strip("0")
    amount = fractions.Fraction(int(head)) * fractions.Fraction(10) ** (top - len(head) + 1)
    if rest:
        amount += fractions.Fraction(10) ** (top - len(head))
    amount *= multiplier
    why = _ABOVE if amount > MAX else _BELOW if amount < NANO else ""
    amount = min(amount, MAX)
    if amount.denominator != 1 and (amount * 10**9).denominator != 1:
        amount = fractions.Fraction(math.ceil(amount * 10**9), 10**9)
    return sign * amount, why


# The same few quantities recur in every object: the short ones are kept (a long one, which
# admission refuses, would hold its whole text in the cache).
_parse_short = functools.lru_cache(maxsize=4096)(_parse_long)


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


def format_human(value: fractions.Fraction | int, *, binary: bool = False) -> str:
    """An amount as a person reads it, in its own unit (cores, bytes, a count).

    ``binary`` (bytes): the largest binary unit it reaches, exact when a unit divides it, else
    to one decimal ("64Gi", "4.8Ti", "1000"); otherwise decimal: "40", "1.5", "500m", "2.5k".
    """
    amount = fractions.Fraction(value)
    sign, amount = ("-", -amount) if amount < 0 else ("", amount)
    if binary:
        for suffix, size in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount >= size:
                scaled = amount / size
                text = str(int(scaled)) if scaled.denominator == 1 else f"{float(scaled):.1f}".removesuffix(".0")
                return f"{sign}{text}{suffix}"
        return f"{sign}{math.ceil(amount)}"
    if amount and amount < 1:
        return f"{sign}{math.ceil(amount * 1000)}m"
    for suffix, size in (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if amount >= size * 10:  # "2500" stays "2500"; "25000" reads "25k"
            scaled = amount / size
            text = str(int(scaled)) if scaled.denominator == 1 else f"{float(scaled):.1f}".removesuffix(".0")
            return f"{sign}{text}{suffix}"
    text = str(int(amount)) if amount.denominator == 1 else f"{float(amount):.3f}".rstrip("0").rstrip(".")
    return f"{sign}{text}"


def amount(name: str, value: fractions.Fraction | int) -> str:
    """One resource's amount (cores, bytes, a count) as Events, conditions and tables write it:
    cpu "40" or "500m", memory and other byte-sized resources "64Gi", counts "4"."""
    return format_human(value, binary=name.startswith(BYTE_RESOURCES))


def describe(resource_list: Mapping[str, object] | None) -> str:
    """A ResourceList as a person reads it: "cpu 2, memory 4Gi, nvidia.com/gpu 1" ("nothing" when
    empty). The one way messages write resources (``scheduler.api.resources`` writes its own
    canonical amounts through :func:`amount`); a malformed quantity is shown as given."""
    parts = []
    for name, raw in sorted((resource_list or {}).items()):
        try:
            parts.append(f"{name} {amount(name, parse(str(raw)))}")
        except errors.QuantityError:
            parts.append(f"{name} {raw}")
    return ", ".join(parts) or "nothing"
