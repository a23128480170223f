"""Resource quantities as the server writes them: known canonical forms, and
properties -- canonical text parses back to the same value, canonicalising
twice changes nothing, the suffix is the largest that keeps an integer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver._validation.quantity import (
    QuantityError,
    canonical,
    normalize,
    parse,
)


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("0.5", "500m"),
        (0.5, "500m"),
        (2, "2"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("0.5Ki", "512"),
        ("1e3", "1e3"),
        ("1000e0", "1e3"),
        ("1.5e3", "1500"),
        ("1000m", "1"),
        ("1000", "1k"),
        ("100m", "100m"),
        ("0.1", "100m"),
        ("0.0000000001", "1n"),
        ("-0", "0"),
        ("0", "0"),
        ("12e-3", "12e-3"),
        ("2000000", "2M"),
    ],
)
def test_canonical_forms(sent: object, stored: str) -> None:
    assert normalize(sent) == stored


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "quantities must match"),
        ("lots", "quantities must match"),
        ("1KiB", "quantities must match"),
        ("1kk", "unable to parse quantity's suffix"),
        (".", "unable to parse numeric part of quantity"),
    ],
)
def test_malformed_quantities(text: str, message: str) -> None:
    with pytest.raises(QuantityError, match=message):
        normalize(text)


_DECIMAL = ["n", "u", "m", "", "k", "M", "G", "T", "P", "E"]
_BINARY = ["Ki", "Mi", "Gi", "Ti", "Pi"]


@st.composite
def quantities(draw: st.DrawFn) -> str:
    sign = draw(st.sampled_from(["", "-", "+"]))
    whole = draw(st.integers(0, 10**6))
    fraction = draw(st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,4}", fullmatch=True)))
    suffix = draw(
        st.one_of(
            st.sampled_from(_DECIMAL),
            st.sampled_from(_BINARY),
            st.integers(-9, 15).map(lambda e: f"e{e}"),
        )
    )
    return f"{sign}{whole}{fraction}{suffix}"


@given(quantities())
def test_canonical_text_parses_back_to_the_same_value(text: str) -> None:
    quantity = parse(text)
    written = canonical(quantity)
    assert parse(written).value == quantity.value


@given(quantities())
def test_canonicalising_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once


@given(quantities())
def test_values_are_whole_nano_units_rounded_away_from_zero(text: str) -> None:
    value = parse(text).value
    assert (value * 10**9).denominator == 1


@given(st.integers(1, 4096), st.sampled_from(_BINARY))  # below the 2^63 cap
def test_whole_binary_quantities_keep_the_largest_binary_suffix(number: int, suffix: str) -> None:
    written = normalize(f"{number}{suffix}")
    assert parse(written).value == number * 1024 ** (_BINARY.index(suffix) + 1)
    mantissa = written.rstrip("KMGTPEi")
    assert mantissa.isdigit()
    assert int(mantissa) % 1024 != 0


@given(st.integers(1, 10**12))
def test_decimal_quantities_keep_no_trailing_thousands(number: int) -> None:
    written = normalize(f"{number * 10**9}n")  # never echoed: ends in 000
    assert parse(written).value == number
    assert not written.rstrip("numkMGTPE").endswith("000") or written.endswith("E")


def test_binary_quantities_are_capped_at_the_largest_int64() -> None:
    assert parse("8192Pi").value == 2**63 - 1
