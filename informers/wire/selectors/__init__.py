"""Label and field selectors, parsed and evaluated client-side with the API
server's grammar (apimachinery ``pkg/labels`` and ``pkg/fields``).

Label selectors (``labelSelector=``)::

    a=b   a==b   a!=b   a in (x,y)   a notin (x)   a   !a   a>1   a<1

comma-joined; whitespace (space, tab, CR, LF) may surround any token.
``!=`` and ``notin`` also match objects without the label; ``>``/``<`` need
the label and compare it as a 64-bit integer (no match if it is not one).
Keys are qualified names (optional lowercase DNS-subdomain prefix of at most
253 characters and ``/``, then a name of at most 63 characters of
``[A-Za-z0-9_.-]`` starting and ending alphanumeric); values are empty or at
most 63 such characters; ``>``/``<`` need a value that is also an integer.

Inside ``( )`` the values are comma-separated and may be empty: ``()``,
``(,x)``, ``(x,)`` and ``(x,,y)`` all hold the empty value. As in
apimachinery, ``,,`` is read as one unit that must be followed by a value or
another comma, so a list may not end in an even run of commas: ``(x,,)`` and
``(,,)`` are errors while ``(x,,,)`` parses. Like the Go lexer, which reads a
NUL character as the end of its input, a NUL where a token would start ends
the selector, and a NUL right after a token only separates it from the next.

Field selectors (``fieldSelector=``)::

    field=value   field==value   field!=value

comma-joined; in values, ``\\,`` ``\\=`` and ``\\\\`` escape a comma, an equals
sign and a backslash (other escapes, and bare ``,``/``=`` in a value, are
errors). A field missing from an object compares as the empty string.

Selectors are immutable values: equal when their requirements are equal, safe
to share between threads. Parse errors raise
:class:`~informers.errors.SelectorParseError`, whose message names the
selector, the position and the reason.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from informers.errors import SelectorParseError
from informers.wire.objects import get_labels

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelRequirement",
    "LabelSelector",
    "Operator",
    "object_fields",
    "supported_fields",
]


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


# --------------------------------------------------------------------------- labels


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


class LabelSelector:
    """A conjunction of :class:`LabelRequirement`, sorted by key (stable).

    The empty selector matches everything. ``str()`` gives the canonical form
    the server accepts; ``LabelSelector.parse(str(s)) == s``.
    """

    __slots__ = ("_compiled_cache", "_requirements")

    def __init__(self, requirements: Iterable[LabelRequirement] = ()) -> None:
        self._requirements: tuple[LabelRequirement, ...] = tuple(
            sorted(requirements, key=lambda r: r.key)
        )
        # The compiled matcher and filter, built on first use (a race builds
        # two equal ones; either may win, both are correct).
        self._compiled_cache: _Compiled | None = None

    @classmethod
    def everything(cls) -> LabelSelector:
        """The empty selector: matches every label set."""
        return cls()

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse the ``labelSelector`` syntax; see the module documentation."""
        if not isinstance(text, str):
            raise SelectorParseError(f"a label selector must be a str, not {type(text).__name__}")
        return cls(_LabelParser(text).parse())

    @classmethod
    def from_set(cls, labels: Mapping[str, str]) -> LabelSelector:
        """``key=value`` for every item (validated)."""
        return cls(LabelRequirement.create(k, Operator.EQUALS, [v]) for k, v in labels.items())

    @classmethod
    def from_dict(cls, selector: Mapping[str, Any]) -> LabelSelector:
        """From a ``LabelSelector`` API object: ``matchLabels`` (each an
        equality) and ``matchExpressions`` (operators ``In``, ``NotIn``,
        ``Exists``, ``DoesNotExist``), all ANDed. ``{}`` matches everything."""
        if not isinstance(selector, Mapping):
            raise SelectorParseError(
                f"a label selector object must be a mapping, not {type(selector).__name__}"
            )
        requirements: list[LabelRequirement] = []
        match_labels = selector.get("matchLabels") or {}
        if not isinstance(match_labels, Mapping):
            raise SelectorParseError("matchLabels must be a mapping of strings")
        for key, value in match_labels.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise SelectorParseError(
                    f"matchLabels entry {key!r}: keys and values must be strings"
                )
            requirements.append(LabelRequirement.create(key, Operator.EQUALS, [value]))
        expressions = selector.get("matchExpressions") or []
        if not isinstance(expressions, list):
            raise SelectorParseError("matchExpressions must be a list")
        for index, expression in enumerate(expressions):
            requirements.append(_expression_requirement(index, expression))
        return cls(requirements)

    @property
    def requirements(self) -> tuple[LabelRequirement, ...]:
        """The requirements, sorted by key."""
        return self._requirements

    @property
    def empty(self) -> bool:
        """True for the selector that matches everything."""
        return not self._requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether every requirement holds for ``labels``."""
        return self._compiled().match(labels)

    def matcher(self) -> Callable[[Mapping[str, str]], bool]:
        """:meth:`matches` as a plain function, compiled once per selector.

        It gives the same answers (and raises the same errors) as checking
        every requirement in order with :meth:`LabelRequirement.matches`, for
        any mapping; for a plain ``dict`` (what the cache holds) it runs a
        closure specialised to each requirement's shape instead of the generic
        checks. Thread-safe, never blocks.
        """
        return self._compiled().match

    def filter(self, objects: Iterable[Any]) -> list[Any]:
        """The objects whose labels match, in order, in a new list: exactly
        ``[o for o in objects if self.matches(get_labels(o))]`` (same result,
        same errors, e.g. :class:`~informers.errors.ObjectKeyError` for a
        tombstone; see :func:`~informers.wire.objects.get_labels`), with the label
        lookup inlined for plain-dict objects. Thread-safe, never blocks."""
        return self._compiled().select(objects)

    def _compiled(self) -> _Compiled:
        compiled = self._compiled_cache
        if compiled is None:
            compiled = self._compiled_cache = _compile(self._requirements)
        return compiled

    def __str__(self) -> str:
        return ",".join(str(r) for r in self._requirements)

    def __repr__(self) -> str:
        return f"LabelSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self._requirements == other._requirements

    def __hash__(self) -> int:
        return hash(self._requirements)


# --- compiled matchers: one closure per requirement shape, for plain dicts
#
# Each closure below returns exactly what LabelRequirement.matches returns for
# a plain dict of labels, with the generic branching decided once:
#
# * "k=v" / "k!=v": ``v == x`` is what ``x in (v,)`` computes (the tuple's
#   element on the left, no call for a missing label: ``v == None`` is False);
# * "k in (...)" / "k notin (...)": the tuple membership itself (``None in
#   values`` is False), through a frozenset for long lists, only for exact
#   ``str`` values (anything else, even unhashable, goes to the tuple);
# * "k" / "!k": the dict's own ``in``;
# * "k>n" / "k<n": the same integer parse, the requirement's side parsed once.
#
# A selector with a requirement that is not the validated shape (built
# directly with odd fields, or a subclass) keeps the generic checks. A
# selector is checked in order and stops at the first failing requirement,
# as before.

_LabelTest = Callable[[dict[str, Any]], bool]
#: What get_labels reads a missing ``metadata.labels`` as; never mutated.
_NO_LABELS: dict[str, str] = {}
#: Above this many values an "in"/"notin" test goes through a frozenset.
_FROZENSET_FROM = 5


def _equals_test(key: str, value: str) -> _LabelTest:
    def test(labels: dict[str, Any]) -> bool:
        # a bool even if the label's own __eq__ answers something else
        return True if value == labels.get(key) else False  # noqa: SIM210

    return test


def _not_equals_test(key: str, value: str) -> _LabelTest:
    def test(labels: dict[str, Any]) -> bool:
        # not "!=": the generic check's "in" calls __eq__, never __ne__
        return not value == labels.get(key)  # noqa: SIM201

    return test


def _in_test(key: str, values: tuple[str, ...], negated: bool) -> _LabelTest:
    if len(values) < _FROZENSET_FROM:
        if negated:
            return lambda labels: labels.get(key) not in values
        return lambda labels: labels.get(key) in values
    fast = frozenset(values)

    def test(labels: dict[str, Any]) -> bool:
        found = labels.get(key)
        hit = found in fast if type(found) is str else found in values
        return not hit if negated else hit

    return test


def _exists_test(key: str, negated: bool) -> _LabelTest:
    if negated:
        return lambda labels: key not in labels
    return lambda labels: key in labels


def _numeric_test(key: str, want: int, greater: bool) -> _LabelTest:
    def test(labels: dict[str, Any]) -> bool:
        value = labels.get(key)
        if value is None:
            return False
        have = _parse_int64(value)
        if have is None:
            return False
        return have > want if greater else have < want

    return test


def _requirement_test(req: LabelRequirement) -> _LabelTest | None:
    """The specialised test of one requirement, or None when it is not a
    validated-shape :class:`LabelRequirement`."""
    key, op, values = req.key, req.operator, req.values
    if (
        type(req) is not LabelRequirement
        or type(key) is not str
        or type(op) is not Operator
        or type(values) is not tuple
        or not all(type(v) is str for v in values)
    ):
        return None
    if op is Operator.EXISTS or op is Operator.DOES_NOT_EXIST:
        return _exists_test(key, op is Operator.DOES_NOT_EXIST)
    if op in _EXACT_OPERATORS and len(values) == 1:
        if op is Operator.NOT_EQUALS:
            return _not_equals_test(key, values[0])
        return _equals_test(key, values[0])
    if op in _SET_OPERATORS or op in _EXACT_OPERATORS:
        return _in_test(key, values, op is Operator.NOT_IN or op is Operator.NOT_EQUALS)
    want = _parse_int64(values[0]) if values else None
    if want is None:
        return None
    return _numeric_test(key, want, op is Operator.GREATER_THAN)


class _Compiled(NamedTuple):
    """A selector compiled: ``match`` is :meth:`LabelSelector.matches` and
    ``select`` is :meth:`LabelSelector.filter`."""

    match: Callable[[Mapping[str, str]], bool]
    select: Callable[[Iterable[Any]], list[Any]]


def _compile(requirements: tuple[LabelRequirement, ...]) -> _Compiled:
    """Functions equal to checking ``requirements`` in order, specialised for
    plain dicts (any other mapping or object takes the generic checks)."""

    def generic(labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in requirements)

    compiled = [_requirement_test(r) for r in requirements]
    tests = tuple(t for t in compiled if t is not None)
    if len(tests) != len(compiled):
        return _Compiled(generic, _generic_select(generic))
    test: _LabelTest
    if not tests:

        def test(labels: dict[str, Any]) -> bool:
            return True

    elif len(tests) == 1:
        (test,) = tests
    elif len(tests) == 2:
        first, second = tests

        def test(labels: dict[str, Any]) -> bool:
            return first(labels) and second(labels)

    else:

        def test(labels: dict[str, Any]) -> bool:
            for each in tests:  # noqa: SIM110 (a loop is cheaper than all() here)
                if not each(labels):
                    return False
            return True

    def match(labels: Mapping[str, str]) -> bool:
        if type(labels) is dict:
            return test(labels)
        return generic(labels)

    if len(requirements) == 1:
        (req,) = requirements
        if req.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS) and len(req.values) == 1:
            return _Compiled(match, _equals_select(req.key, req.values[0], match))
    if len(tests) == 2:
        return _Compiled(match, _pair_select(tests[0], tests[1], match))
    return _Compiled(match, _dict_select(test, match))


def _generic_select(
    match: Callable[[Mapping[str, str]], bool],
) -> Callable[[Iterable[Any]], list[Any]]:
    def select(objects: Iterable[Any]) -> list[Any]:
        return [obj for obj in objects if match(get_labels(obj))]

    return select


# The two loops below are get_labels inlined for dict objects with dict
# metadata: labels that are a dict (or missing, which get_labels reads as {})
# go to the dict test; anything else (None, attribute-style objects, other
# mappings, tombstones, which raise) takes get_labels and the full matcher.


def _dict_select(
    test: _LabelTest, match: Callable[[Mapping[str, str]], bool]
) -> Callable[[Iterable[Any]], list[Any]]:
    def select(objects: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        keep = out.append
        for obj in objects:
            if type(obj) is dict:
                metadata = obj.get("metadata")
                if type(metadata) is dict:
                    labels = metadata.get("labels", _NO_LABELS)
                    if type(labels) is dict:
                        if test(labels):
                            keep(obj)
                        continue
            if match(get_labels(obj)):
                keep(obj)
        return out

    return select


def _pair_select(
    first: _LabelTest, second: _LabelTest, match: Callable[[Mapping[str, str]], bool]
) -> Callable[[Iterable[Any]], list[Any]]:
    """_dict_select for two requirements, both tests called from the loop."""

    def select(objects: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        keep = out.append
        for obj in objects:
            if type(obj) is dict:
                metadata = obj.get("metadata")
                if type(metadata) is dict:
                    labels = metadata.get("labels", _NO_LABELS)
                    if type(labels) is dict:
                        if first(labels) and second(labels):
                            keep(obj)
                        continue
            if match(get_labels(obj)):
                keep(obj)
        return out

    return select


def _equals_select(
    key: str, value: str, match: Callable[[Mapping[str, str]], bool]
) -> Callable[[Iterable[Any]], list[Any]]:
    """_dict_select for the commonest selector, one ``key=value``, with the
    test written out (saves a call per object)."""

    def select(objects: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        keep = out.append
        for obj in objects:
            if type(obj) is dict:
                metadata = obj.get("metadata")
                if type(metadata) is dict:
                    labels = metadata.get("labels", _NO_LABELS)
                    if type(labels) is dict:
                        if value == labels.get(key):
                            keep(obj)
                        continue
            if match(get_labels(obj)):
                keep(obj)
        return out

    return select


_EXPRESSION_OPERATORS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def _expression_requirement(index: int, expression: Any) -> LabelRequirement:
    where = f"matchExpressions[{index}]"
    if not isinstance(expression, Mapping):
        raise SelectorParseError(f"{where} must be a mapping")
    key, operator = expression.get("key"), expression.get("operator")
    values = expression.get("values") or []
    if not isinstance(key, str):
        raise SelectorParseError(f"{where}.key must be a string")
    if operator not in _EXPRESSION_OPERATORS:
        raise SelectorParseError(
            f"{where}.operator: {operator!r} is not a valid label selector operator "
            f"(supported: {', '.join(_EXPRESSION_OPERATORS)})"
        )
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SelectorParseError(f"{where}.values must be a list of strings")
    try:
        return LabelRequirement.create(key, _EXPRESSION_OPERATORS[operator], values)
    except SelectorParseError as exc:
        raise SelectorParseError(f"{where}: {exc}") from None


# --- the label selector lexer and parser (same tokens and decisions as apimachinery)


class _Tok(enum.Enum):
    END = enum.auto()
    IDENT = enum.auto()
    OPEN = enum.auto()
    CLOSE = enum.auto()
    COMMA = enum.auto()
    NOT = enum.auto()
    EQ = enum.auto()
    DEQ = enum.auto()
    NEQ = enum.auto()
    GT = enum.auto()
    LT = enum.auto()
    IN = enum.auto()
    NOTIN = enum.auto()


_SYMBOLS = {
    "(": _Tok.OPEN,
    ")": _Tok.CLOSE,
    ",": _Tok.COMMA,
    "!": _Tok.NOT,
    "=": _Tok.EQ,
    "==": _Tok.DEQ,
    "!=": _Tok.NEQ,
    ">": _Tok.GT,
    "<": _Tok.LT,
}
_KEYWORDS = {"in": _Tok.IN, "notin": _Tok.NOTIN}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_WORD_END = _SPECIAL | _WHITESPACE | {"\0"}
_BINARY = {
    _Tok.IN: Operator.IN,
    _Tok.NOTIN: Operator.NOT_IN,
    _Tok.EQ: Operator.EQUALS,
    _Tok.DEQ: Operator.DOUBLE_EQUALS,
    _Tok.NEQ: Operator.NOT_EQUALS,
    _Tok.GT: Operator.GREATER_THAN,
    _Tok.LT: Operator.LESS_THAN,
}


class _Token(NamedTuple):
    kind: _Tok
    text: str
    position: int


def _lex(text: str) -> list[_Token]:
    """Tokens as apimachinery's byte lexer cuts them. Its reader returns 0 both
    at the end of the input and for a NUL character, so a NUL where a token
    would start ends the selector (the rest is never read), and a NUL right
    after a token is swallowed as a separator."""
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n or text[i] == "\0":
            tokens.append(_Token(_Tok.END, "", i))
            return tokens
        start = i
        if text[i] in _SPECIAL:
            # longest run of special characters that is still a token
            j = i + 1
            while j < n and text[i : j + 1] in _SYMBOLS:
                j += 1
            tokens.append(_Token(_SYMBOLS[text[i:j]], text[i:j], start))
        else:
            j = i
            while j < n and text[j] not in _WORD_END:
                j += 1
            word = text[i:j]
            tokens.append(_Token(_KEYWORDS.get(word, _Tok.IDENT), word, start))
        if j < n and text[j] == "\0":
            j += 1
        i = j


class _LabelParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _lex(text)
        self.pos = 0

    def fail(self, token: _Token, reason: str) -> SelectorParseError:
        found = token.text if token.kind is not _Tok.END else "end of string"
        return SelectorParseError(
            f"unable to parse label selector {self.text!r} at position {token.position}: "
            f"found {found!r}, {reason}"
        )

    def peek(self, *, value: bool = True) -> _Token:
        token = self.tokens[self.pos]
        if value and token.kind in (_Tok.IN, _Tok.NOTIN):
            return token._replace(kind=_Tok.IDENT)
        return token

    def take(self, *, value: bool = True) -> _Token:
        token = self.peek(value=value)
        self.pos += 1
        return token

    def parse(self) -> list[LabelRequirement]:
        requirements: list[LabelRequirement] = []
        while True:
            token = self.peek()
            if token.kind is _Tok.END:
                return requirements
            if token.kind not in (_Tok.IDENT, _Tok.NOT):
                raise self.fail(token, "expected: !, identifier, or end of string")
            requirements.append(self.requirement())
            after = self.take()
            if after.kind is _Tok.END:
                return requirements
            if after.kind is not _Tok.COMMA:
                raise self.fail(after, "expected: ',' or end of string")
            following = self.peek()
            if following.kind not in (_Tok.IDENT, _Tok.NOT):
                raise self.fail(following, "expected: identifier after ','")

    def requirement(self) -> LabelRequirement:
        token = self.take()
        negated = token.kind is _Tok.NOT
        if negated:
            token = self.take()
        if token.kind is not _Tok.IDENT:
            raise self.fail(token, "expected: identifier")
        key = token.text
        problem = _label_key_problem(key)
        if problem is not None:
            raise self.fail(token, f"invalid label key: {problem}")
        if negated:
            # "!key" is complete by itself: whatever follows must end the
            # requirement ("!a=b" fails at "=" like any other trailing token)
            return self.make(token, key, Operator.DOES_NOT_EXIST, [])
        if self.peek().kind in (_Tok.END, _Tok.COMMA):
            return self.make(token, key, Operator.EXISTS, [])
        op_token = self.take(value=False)
        if op_token.kind not in _BINARY:
            raise self.fail(op_token, "expected: in, notin, =, ==, !=, gt, lt")
        operator = _BINARY[op_token.kind]
        values = self.value_set() if operator in _SET_OPERATORS else self.exact_value()
        return self.make(op_token, key, operator, values)

    def make(self, token: _Token, key: str, op: Operator, values: list[str]) -> LabelRequirement:
        try:
            return LabelRequirement.create(key, op, values)
        except SelectorParseError as exc:
            raise SelectorParseError(
                f"unable to parse label selector {self.text!r} at position {token.position}: {exc}"
            ) from None

    def exact_value(self) -> list[str]:
        token = self.peek()
        if token.kind in (_Tok.END, _Tok.COMMA):
            return [""]
        token = self.take()
        if token.kind is not _Tok.IDENT:
            raise self.fail(token, "expected: identifier")
        return [token.text]

    def value_set(self) -> list[str]:
        token = self.take()
        if token.kind is not _Tok.OPEN:
            raise self.fail(token, "expected: '('")
        token = self.peek()
        if token.kind is _Tok.CLOSE:  # "()" is the set holding the empty value
            self.take()
            return [""]
        if token.kind not in (_Tok.IDENT, _Tok.COMMA):
            raise self.fail(token, "expected: ',', ')' or identifier")
        values: list[str] = []
        while True:
            token = self.take()
            if token.kind is _Tok.IDENT:
                values.append(token.text)
                following = self.peek()
                if following.kind is _Tok.CLOSE:
                    self.take()
                    return values
                if following.kind is not _Tok.COMMA:
                    raise self.fail(following, "expected: ',' or ')'")
            elif token.kind is _Tok.COMMA:
                # Empty values around commas, decided as apimachinery does:
                # a leading "," stands for "", and so does a trailing ",)".
                if not values:
                    values.append("")
                following = self.peek()
                if following.kind is _Tok.CLOSE:
                    self.take()
                    values.append("")
                    return values
                if following.kind is _Tok.COMMA:
                    # ",," is read as one unit (the empty value between the
                    # two commas); what comes next must be a value or another
                    # ",": so "(a,,b)" and "(a,,,)" parse but "(a,,)" does not.
                    self.take()
                    values.append("")
                    if self.peek().kind is _Tok.CLOSE:
                        raise self.fail(
                            self.peek(),
                            "expected: ',' or identifier (an even run of commas "
                            "cannot end a value list)",
                        )
            else:
                raise self.fail(token, "expected: ',' or identifier")


# --------------------------------------------------------------------------- fields


class FieldRequirement(NamedTuple):
    """One field requirement; ``operator`` is ``"="`` or ``"!="`` (``==``
    parses as ``=``)."""

    field: str
    operator: str
    value: str


def _escape_field_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(text: str, selector: str) -> str:
    if "\\" not in text and "," not in text and "=" not in text:
        return text
    out: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            if char not in "\\,=":
                raise SelectorParseError(
                    f"invalid field selector {selector!r}: invalid escape sequence '\\{char}'"
                )
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            raise SelectorParseError(
                f"invalid field selector {selector!r}: unescaped {char!r} in value {text!r}"
            )
        else:
            out.append(char)
    if escaped:
        raise SelectorParseError(
            f"invalid field selector {selector!r}: invalid escape sequence '\\'"
        )
    return "".join(out)


def _split_field_terms(text: str) -> list[str]:
    """Split on commas not escaped by a backslash (escapes are kept)."""
    terms: list[str] = []
    start, escaped = 0, False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(text[start:index])
            start = index + 1
    terms.append(text[start:])
    return terms


class FieldSelector:
    """A conjunction of :class:`FieldRequirement` (``field=value`` /
    ``field!=value``). The empty selector matches everything; ``str()`` is the
    canonical, escaped form and ``FieldSelector.parse(str(s)) == s``.

    The grammar does not know which fields exist: use :func:`supported_fields`
    to reject unknown ones as the server does."""

    __slots__ = ("_requirements",)

    def __init__(self, requirements: Iterable[FieldRequirement] = ()) -> None:
        reqs = [FieldRequirement(*r) for r in requirements]
        for req in reqs:
            if req.operator not in ("=", "!="):
                raise SelectorParseError(f"field selector operator must be '=' or '!=': {req!r}")
        self._requirements = tuple(sorted(reqs, key=lambda r: str(_FieldTerm(r))))

    @classmethod
    def everything(cls) -> FieldSelector:
        """The empty selector: matches everything."""
        return cls()

    @classmethod
    def from_set(cls, fields: Mapping[str, str]) -> FieldSelector:
        """``field=value`` for every item."""
        return cls(FieldRequirement(f, "=", v) for f, v in fields.items())

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        """Parse the ``fieldSelector`` syntax; see the module documentation.

        Each comma-separated term splits at its first ``!=``, ``==`` or ``=``;
        the field is taken verbatim, the value is unescaped."""
        if not isinstance(text, str):
            raise SelectorParseError(f"a field selector must be a str, not {type(text).__name__}")
        requirements: list[FieldRequirement] = []
        for term in _split_field_terms(text) if text else []:
            if not term:
                continue
            split = _split_field_term(term)
            if split is None:
                raise SelectorParseError(
                    f"invalid field selector {text!r}: can't split term {term!r} "
                    "(expected field=value, field==value or field!=value)"
                )
            field_name, operator, raw = split
            value = _unescape_field_value(raw, text)
            requirements.append(FieldRequirement(field_name, operator, value))
        return cls(requirements)

    @property
    def requirements(self) -> tuple[FieldRequirement, ...]:
        """The requirements, in canonical order."""
        return self._requirements

    @property
    def empty(self) -> bool:
        """True for the selector that matches everything."""
        return not self._requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether every requirement holds; a missing field counts as ``""``."""
        for req in self._requirements:
            equal = fields.get(req.field, "") == req.value
            if equal != (req.operator == "="):
                return False
        return True

    def __str__(self) -> str:
        return ",".join(str(_FieldTerm(r)) for r in self._requirements)

    def __repr__(self) -> str:
        return f"FieldSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self._requirements == other._requirements

    def __hash__(self) -> int:
        return hash(self._requirements)


class _FieldTerm(NamedTuple):
    req: FieldRequirement

    def __str__(self) -> str:
        field_name, operator, value = self.req
        return f"{field_name}{operator}{_escape_field_value(value)}"


def _split_field_term(term: str) -> tuple[str, str, str] | None:
    for index in range(len(term)):
        if term.startswith("!=", index):
            return term[:index], "!=", term[index + 2 :]
        if term.startswith("==", index):
            return term[:index], "=", term[index + 2 :]
        if term[index] == "=":
            return term[:index], "=", term[index + 1 :]
    return None


# --------------------------------------------------------------------------- object fields

_COMMON_FIELDS = ("metadata.name", "metadata.namespace")

#: Field paths (beyond metadata.name/namespace) the server supports per resource.
_RESOURCE_FIELDS: dict[str, tuple[str, ...]] = {
    "pods": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    "events": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    "secrets": ("type",),
    "namespaces": ("status.phase",),
    "nodes": ("spec.unschedulable",),
    "replicasets": ("status.replicas",),
    "replicationcontrollers": ("status.replicas",),
    "jobs": ("status.successful",),
}

# Paths whose source differs from the field name.
_FIELD_SOURCES: dict[str, tuple[str, ...]] = {"source": ("source", "component")}
# Defaults the server applies when the object leaves the field out.
_FIELD_DEFAULTS: dict[tuple[str, str], str] = {
    ("pods", "spec.hostNetwork"): "false",
    ("nodes", "spec.unschedulable"): "false",
    ("replicasets", "status.replicas"): "0",
    ("replicationcontrollers", "status.replicas"): "0",
    ("jobs", "status.successful"): "0",
}


def supported_fields(resource_plural: str) -> frozenset[str]:
    """The field names a field selector may use for this resource (as the API
    server: ``metadata.name`` and ``metadata.namespace`` everywhere, plus
    e.g. ``spec.nodeName`` and ``status.phase`` for pods). The emulator
    answers 400 for any other field."""
    return frozenset(_COMMON_FIELDS + _RESOURCE_FIELDS.get(resource_plural, ()))


def _field_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def object_fields(obj: Mapping[str, Any], resource_plural: str) -> dict[str, str]:
    """The selectable fields of a raw object, as strings (missing ones are
    ``""``, booleans ``"true"``/``"false"``), keyed by the names of
    :func:`supported_fields`; feed the result to :meth:`FieldSelector.matches`."""
    metadata = obj.get("metadata") or {}
    fields = {
        "metadata.name": _field_text(metadata.get("name")),
        "metadata.namespace": _field_text(metadata.get("namespace")),
    }
    for name in _RESOURCE_FIELDS.get(resource_plural, ()):
        value: Any = obj
        for part in _FIELD_SOURCES.get(name, tuple(name.split("."))):
            value = value.get(part) if isinstance(value, Mapping) else None
        text = _field_text(value)
        if value is None:
            text = _FIELD_DEFAULTS.get((resource_plural, name), "")
        fields[name] = text
    return fields
