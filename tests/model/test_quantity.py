"""Kubernetes quantities: exact parsing, rounding up, clear errors for garbage."""

from __future__ import annotations

import contextlib
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hpctop.errors import QuantityError
from hpctop.model.quantity import format_bytes, format_cpu, format_gpu, parse_quantity, to_int, to_milli


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("500m", Fraction(1, 2)),
        ("2", Fraction(2)),
        ("80Gi", Fraction(80 * 1024**3)),
        ("1.5Ti", Fraction(3 * 1024**4, 2)),
        ("2e3", Fraction(2000)),
        ("5E6", Fraction(5_000_000)),
        ("1k", Fraction(1000)),
        ("1M", Fraction(1_000_000)),
        ("1m", Fraction(1, 1000)),
        ("100n", Fraction(1, 10_000_000)),
        (".5", Fraction(1, 2)),
        ("0.1", Fraction(1, 10)),
        ("-1", Fraction(-1)),
        ("+3Ki", Fraction(3072)),
        (7, Fraction(7)),
        (0.25, Fraction(1, 4)),
    ],
)
def test_parse_quantity(text: str | int | float, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


def test_milli_and_mega_differ_by_a_billion() -> None:
    assert parse_quantity("1M") / parse_quantity("1m") == 10**9


@pytest.mark.parametrize(
    ("text", "milli"), [("500m", 500), ("0.1", 100), ("1", 1000), ("1.0001", 1001), ("1u", 1)]
)
def test_to_milli_rounds_up(text: str, milli: int) -> None:
    assert to_milli(text) == milli


def test_to_int_rounds_up() -> None:
    assert to_int("1.5") == 2
    assert to_int("15258Mi") == 15258 * 1024**2


@pytest.mark.parametrize(
    "garbage", ["", "abc", "1.2.3", "5Kb", "Gi", "1 Gi", "--1", "1e", "nan", True, None, [1]]
)
def test_garbage_raises_a_clear_error(garbage: object) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(garbage)  # type: ignore[arg-type]
    assert "quantity" in str(info.value)


@given(st.integers(min_value=0, max_value=10**12))
def test_plain_integers_round_trip(n: int) -> None:
    assert to_int(str(n)) == n
    assert to_milli(f"{n}m") == n


@given(st.text(max_size=12))
def test_parser_never_crashes_with_anything_but_quantity_error(text: str) -> None:
    with contextlib.suppress(QuantityError):
        parse_quantity(text)


def test_formatting() -> None:
    assert format_cpu(32000) == "32"
    assert format_cpu(500) == "500m"
    assert format_bytes(80 * 1024**3) == "80Gi"
    assert format_bytes(3 * 1024**4 // 2) == "1.5Ti"
    assert format_gpu(8000) == "8"
    assert format_gpu(220) == "0.22"
