"""Kubernetes resource quantities (k8s.io/apimachinery ``resource.Quantity``)
parsed and written back as the real server serialises them.

:func:`parse` reads ``"500m"``, ``"1.5Gi"``, ``"1e3"``, ``"0.5"``: an
optional sign, a decimal number and a suffix -- decimal SI (``n u m "" k M
G T P E``), binary SI (``Ki Mi Gi Ti Pi Ei``) or a decimal exponent
(``e3``, ``E-2``). Values are exact (Python integers and fractions); a value
finer than 10^-9 is rounded up, away from zero, to the next nano unit (a
request for "some" never becomes none); binary values are capped at 2^63-1.

:func:`canonical` is the string the server answers with: the number with
the largest suffix of the quantity's format that keeps it an integer
(``0.5`` → ``500m``, ``1000m`` → ``1``, ``1024Mi`` → ``1Gi``, ``1.5Gi`` →
``1536Mi``); a binary quantity that is not a whole number, or is smaller
than 1024, is written in decimal SI (``0.5Ki`` → ``512``); a decimal
exponent stays an exponent, a multiple of 3 (``1.5e3`` → ``1500``,
``1000e0`` → ``1e3``). As Go's fast path does, a short value already
written canonically is echoed exactly as it was sent (``100m``, ``1Gi``,
``1e3``, even ``+100m``). Decimal values beyond ``E`` (10^18) are written
with an exponent. Pure functions (answers cached); thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "FORMAT_WRONG",
    "Quantity",
    "QuantityError",
    "canonical",
    "parse",
]

FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_NUMERIC = "unable to parse numeric part of quantity"
_SUFFIX = "unable to parse quantity's suffix"

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_DEC_SUFFIXES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DEC_BY_EXPONENT = {e: s for s, e in _DEC_SUFFIXES.items()}
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BIN_BY_EXPONENT = {e // 10: s for s, e in _BIN_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_MAX_INT64 = 2**63 - 1
_NANO = Fraction(1, 10**9)


class QuantityError(ValueError):
    """The text is not a quantity; the message is the server's."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A parsed quantity: its exact ``value``, ``format`` (``DecimalSI``,
    ``BinarySI`` or ``DecimalExponent``) and, when the server would echo the
    text it was given, that text (``cached``)."""

    value: Fraction
    format: str
    cached: str | None = None


def _split(text: str) -> tuple[bool, str, str, str]:
    """``parseQuantityString``: (positive, numerator, denominator, suffix)."""
    positive = True
    pos, end = 0, len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    zeros = pos > (1 if text[0] in "+-" else 0)
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or ("0" if zeros else "")  # "0m" is zero
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:end]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix."""
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and all(c in _DIGITS for c in body):
            return 10, int(digits), DECIMAL_EXPONENT
    raise QuantityError(_SUFFIX)


def _cached(text: str, num: str, denom: str, exponent: int, fmt: str) -> bool:
    """Whether Go's fast path keeps ``text`` verbatim (an int64 value already
    written canonically)."""
    if fmt == BINARY_SI:
        if denom or exponent < 0 or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return False
        value = int(num or "0")
        return (value << exponent) <= _MAX_INT64 and value & 0x07 != 0
    if 18 - len(num) - len(denom) < 0:
        return False
    scale = exponent - len(denom)
    shifted = num + denom
    if scale < -9 or not shifted:
        return False
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


@lru_cache(maxsize=8192)
def parse(text: str) -> Quantity:
    """``ParseQuantity``; :class:`QuantityError` with the server's message."""
    text = text.strip()
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Quantity(Fraction(0), DECIMAL_SI, "0")
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    if not num and not denom:
        raise QuantityError(_NUMERIC)
    value = Fraction(int(num + denom or "0"), 10 ** len(denom))
    value *= Fraction(10) ** exponent if base == 10 else 2**exponent
    cached = text if _cached(text, num, denom, exponent, fmt) else None
    if value and value % _NANO:
        value = (value / _NANO).__ceil__() * _NANO  # round up to a nano unit
    if fmt == BINARY_SI and value > _MAX_INT64:
        value = Fraction(_MAX_INT64)
        cached = None
    if fmt == BINARY_SI and 0 < value < 1:
        fmt = DECIMAL_SI
    if not positive:
        value = -value
    return Quantity(value, fmt, cached)


def _remove_factors(value: int, factor: int) -> tuple[int, int]:
    times = 0
    while value and value % factor == 0:
        value //= factor
        times += 1
    return value, times


def canonical(quantity: Quantity) -> str:
    """``Quantity.String()``: the quantity as the server writes it."""
    if quantity.cached is not None:
        return quantity.cached
    value = quantity.value
    if value == 0:
        return "0"
    fmt = quantity.format
    if fmt == BINARY_SI and (-1024 < value < 1024 or value.denominator != 1):
        fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        negative = value < 0
        amount, times = _remove_factors(abs(value.numerator), 1024)
        suffix = _BIN_BY_EXPONENT.get(times, "")
        if not suffix and times:
            amount *= 1024**times
        return ("-" if negative else "") + str(amount) + suffix
    # decimal: mantissa * 10**exponent, the exponent a multiple of 3
    exponent = 0
    while value.denominator != 1:
        value *= 10
        exponent -= 1
    amount, times = _remove_factors(value.numerator, 10)
    exponent += times
    while exponent % 3:
        amount *= 10
        exponent -= 1
    if fmt == DECIMAL_EXPONENT or exponent not in _DEC_BY_EXPONENT:
        return str(amount) + (f"e{exponent}" if exponent else "")
    return str(amount) + _DEC_BY_EXPONENT[exponent]


def normalize(value: object) -> str:
    """The canonical text of a JSON quantity (a string or a number);
    :class:`QuantityError` when it is not one."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise QuantityError(FORMAT_WRONG)
    return _normalize_text(value if isinstance(value, str) else repr(value))


@lru_cache(maxsize=8192)
def _normalize_text(text: str) -> str:
    return canonical(parse(text))
