from __future__ import annotations

import fractions

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
