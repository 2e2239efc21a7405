from __future__ import annotations

import fractions
import re

import pytest

from bridge import errors, quantity


@pytest.mark.parametrize(
    ("raw", "milli"),
    [("500m", 500), ("2", 2000), ("0.1", 100), ("1e3", 1_000_000), ("1E3", 1_000_000), ("1k", 1_000_000), (3, 3000)],
)
def test_to_milli(raw: str | int, milli: int) -> None:
    assert quantity.to_milli(raw) == milli


@pytest.mark.parametrize(
    ("raw", "value"),
    [("1Gi", 2**30), ("512Mi", 512 * 2**20), ("1G", 10**9), ("1.5Ki", 1536), ("100m", 1), ("1E", 10**18)],
)
def test_to_int(raw: str, value: int) -> None:
    assert quantity.to_int(raw) == value


def test_parse_is_exact() -> None:
    assert quantity.parse("0.1") == fractions.Fraction(1, 10)


@pytest.mark.parametrize("raw", ["", "abc", "1.2.3", "5Xi", "--1"])
def test_malformed_raises(raw: str) -> None:
    with pytest.raises(errors.QuantityError):
        quantity.parse(raw)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("1e400", quantity.MAX),
        ("-1e400", -quantity.MAX),
        ("1e30000000", quantity.MAX),
        ("1e" + "9" * 5000, quantity.MAX),
        ("9" * 5000, quantity.MAX),
        ("9223372036854775808", quantity.MAX),
        ("8Ei", quantity.MAX),
        ("9223372036854775807", quantity.MAX),
        ("7Ei", 7 * 2**60),
        ("1e-30000000", quantity.NANO),
        ("0.5n", quantity.NANO),
        ("-0.5n", -quantity.NANO),
        ("0." + "0" * 50_000 + "1", quantity.NANO),
        ("1.0000000001", fractions.Fraction(1_000_000_001, 10**9)),
        ("1." + "0" * 60 + "1", fractions.Fraction(1_000_000_001, 10**9)),
        ("0e400", 0),
    ],
)
def test_bounded_as_apimachinery_bounds_a_quantity(raw: str, value: fractions.Fraction | int) -> None:
    assert quantity.parse(raw) == value


def test_numbers_longer_than_pythons_int_conversion_limit_are_capped_not_refused() -> None:
    """Python refuses to turn more than 4,300 digits into an int; a Quantity caps them instead."""
    assert quantity.parse("9" * 5000 + "Ki") == quantity.MAX
    # 1111111111.111… rounded up (away from zero) to its nano unit, as apimachinery rounds
    assert quantity.parse("-" + "1" * 5000 + "e-4990") == -fractions.Fraction(1_111_111_111_111_111_112, 10**9)


def test_capped_values_format_and_count() -> None:
    assert quantity.format_cpu(quantity.to_milli("1e400")) == str(2**63 - 1)
    assert quantity.format_memory(quantity.to_int("1e400")) == str(2**63 - 1)


def test_describe_writes_a_resource_list_as_people_read_it() -> None:
    assert quantity.describe({"memory": "4096Mi", "cpu": "70000m", "nvidia.com/gpu": "1"}) == (
        "cpu 70, memory 4Gi, nvidia.com/gpu 1"
    )
    assert quantity.describe({"ephemeral-storage": "5.27766e+12", "cpu": "500m"}) == "cpu 500m, ephemeral-storage 4.8Ti"
    assert quantity.describe({}) == "nothing" and quantity.describe(None) == "nothing"
    assert quantity.describe({"cpu": "lots"}) == "cpu lots"  # shown as given, never a crash


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("1e-999999999", "is below 1n"),
        ("-1e-999999999", "is below 1n"),
        ("1E-30", "is below 1n"),
        ("0.5n", "is below 1n"),
        ("1e999999999", "is above 2^63 - 1"),
        ("1e19", "is above 2^63 - 1"),
        ("9223372036854775808", "is above 2^63 - 1"),
        ("8Ei", "is above 2^63 - 1"),
        (2**63, "is above 2^63 - 1"),
        (1e-30, "is below 1n"),
        ("1" * 65, "has 65 characters"),
        ("0." + "0" * 70 + "1", "has 73 characters"),
        ("lots", "not a Kubernetes quantity"),
        (None, "not a Kubernetes quantity"),
        (True, "not a Kubernetes quantity"),
        (float("inf"), "not a finite number"),
    ],
)
def test_bounded_refuses_what_apimachinery_would_not_keep_as_written(value: object, why: str) -> None:
    with pytest.raises(errors.QuantityError, match=re.escape(why)):
        quantity.bounded(value)


@pytest.mark.parametrize(
    ("value", "exact"),
    [
        ("1n", fractions.Fraction(1, 10**9)),
        ("0e-999999999", fractions.Fraction(0)),
        ("9223372036854775807", fractions.Fraction(2**63 - 1)),
        ("7Ei", fractions.Fraction(7 * 2**60)),
        ("1.0000000001", fractions.Fraction(1_000_000_001, 10**9)),  # finer than nano: rounded up, as apimachinery
        ("500m", fractions.Fraction(1, 2)),
        (3, fractions.Fraction(3)),
    ],
)
def test_bounded_keeps_what_is_in_range(value: object, exact: fractions.Fraction) -> None:
    assert quantity.bounded(value) == exact
