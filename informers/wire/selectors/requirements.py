"""Label requirements: one key, an operator and its values (apimachinery
``selection.Operator`` and ``labels.Requirement``), validated as the API
server validates them.

Keys are qualified names (optional lowercase DNS-subdomain prefix of at most
253 characters and ``/``, then a name of at most 63 characters of
``[A-Za-z0-9_.-]`` starting and ending alphanumeric); values are empty or at
most 63 such characters; ``>``/``<`` need a value that is also an integer.
``!=`` and ``notin`` also match label sets without the key; ``>``/``<`` need
the key and compare its value as a 64-bit integer (no match if it is not one).

Requirements are immutable values, safe to share between threads. A
:class:`~informers.wire.selectors.labels.LabelSelector` is a conjunction of
them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from informers.errors import SelectorParseError

__all__ = ["LabelRequirement", "Operator"]


class Operator(enum.StrEnum):
    """A label requirement's operator (values as in apimachinery ``selection``)."""

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_SET_OPERATORS = frozenset({Operator.IN, Operator.NOT_IN})
_EXACT_OPERATORS = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS})
_UNARY_OPERATORS = frozenset({Operator.EXISTS, Operator.DOES_NOT_EXIST})
_NUMERIC_OPERATORS = frozenset({Operator.GREATER_THAN, Operator.LESS_THAN})
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# --------------------------------------------------------------------------- validation

_NAME_MAX = 63
_PREFIX_MAX = 253
_NAME_RE = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN_RE = re.compile(
    r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
)
_INT_RE = re.compile(r"[+-]?[0-9]+")


def _label_key_problem(key: str) -> str | None:
    """Why ``key`` is not a valid label key (a qualified name), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            return "prefix part must be non-empty"
        if "/" in prefix:
            return "a qualified name must have at most one '/'"
        if len(prefix) > _PREFIX_MAX:
            return f"prefix part must be no more than {_PREFIX_MAX} characters"
        if not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
            return (
                "prefix part must be a lowercase RFC 1123 subdomain (lowercase "
                "alphanumerics, '-' and '.', starting and ending alphanumeric)"
            )
    if not name:
        return "name part must be non-empty"
    if len(name) > _NAME_MAX:
        return f"name part must be no more than {_NAME_MAX} characters"
    if not _NAME_RE.fullmatch(name):
        return (
            "name part must consist of alphanumerics, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return None


def _label_value_problem(value: str) -> str | None:
    """Why ``value`` is not a valid label value, or None."""
    if len(value) > _NAME_MAX:
        return f"must be no more than {_NAME_MAX} characters"
    if value and not _NAME_RE.fullmatch(value):
        return (
            "a valid label value must be empty or consist of alphanumerics, '-', '_' "
            "or '.', and must start and end with an alphanumeric character"
        )
    return None


def _parse_int64(text: str) -> int | None:
    if not _INT_RE.fullmatch(text):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One label requirement. Build with :meth:`create` (validates); ``values``
    is sorted and deduplicated for ``in``/``notin``, one value for the exact
    and numeric operators, empty for ``exists``/``!``."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    @classmethod
    def create(
        cls, key: str, operator: Operator | str, values: Iterable[str] = ()
    ) -> LabelRequirement:
        """A validated requirement; :class:`~informers.errors.SelectorParseError`
        names what is wrong."""
        try:
            op = Operator(operator)
        except ValueError:
            raise SelectorParseError(
                f"label {key!r}: {operator!r} is not a label selector operator"
            ) from None
        if not isinstance(key, str):
            raise SelectorParseError(f"a label key must be a str, not {type(key).__name__}")
        if isinstance(values, (str, bytes)):
            raise SelectorParseError(
                f"label {key!r}: values must be an iterable of str, not a single "
                f"{type(values).__name__}"
            )
        vals = list(values)
        for value in vals:
            if not isinstance(value, str):
                raise SelectorParseError(
                    f"label {key!r}: a value must be a str, not {type(value).__name__}"
                )
        problem = _label_key_problem(key)
        if problem is not None:
            raise SelectorParseError(f"invalid label key {key!r}: {problem}")
        if op in _SET_OPERATORS:
            if not vals:
                raise SelectorParseError(
                    f"label {key!r}: for 'in', 'notin' operators, values set can't be empty"
                )
            vals = sorted(set(vals))
        elif op in _EXACT_OPERATORS:
            if len(vals) != 1:
                raise SelectorParseError(
                    f"label {key!r}: exact-match compatibility requires one single value"
                )
        elif op in _UNARY_OPERATORS:
            if vals:
                raise SelectorParseError(
                    f"label {key!r}: values set must be empty for exists and does not exist"
                )
        else:
            if len(vals) != 1:
                raise SelectorParseError(
                    f"label {key!r}: for 'gt', 'lt' operators, exactly one value is required"
                )
            if _parse_int64(vals[0]) is None:
                raise SelectorParseError(
                    f"label {key!r}: for 'gt', 'lt' operators, the value must be an integer"
                )
        for value in vals:
            problem = _label_value_problem(value)
            if problem is not None:
                raise SelectorParseError(f"invalid value {value!r} for label {key!r}: {problem}")
        return cls(key, op, tuple(vals))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies this requirement."""
        op = self.operator
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if op in _SET_OPERATORS or op in _EXACT_OPERATORS:
            if value is None:
                return op is Operator.NOT_IN or op is Operator.NOT_EQUALS
            found = value in self.values
            return not found if op is Operator.NOT_IN or op is Operator.NOT_EQUALS else found
        if value is None:
            return False
        have, want = _parse_int64(value), _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        if op in _SET_OPERATORS:
            return f"{self.key} {op.value} ({','.join(self.values)})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(op, op.value)
        return f"{self.key}{symbol}{self.values[0]}"
