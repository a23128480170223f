"""Label selectors, parsed and evaluated client-side with the API server's
grammar (apimachinery ``pkg/labels``)::

    a=b   a==b   a!=b   a in (x,y)   a notin (x)   a   !a   a>1   a<1

comma-joined; whitespace (space, tab, CR, LF) may surround any token. Each
term is a :class:`~informers.wire.selectors.requirements.LabelRequirement`
(see there for the operators' meaning and what keys and values may be).

Inside ``( )`` the values are comma-separated and may be empty: ``()``,
``(,x)``, ``(x,)`` and ``(x,,y)`` all hold the empty value. As in
apimachinery, ``,,`` is read as one unit that must be followed by a value or
another comma, so a list may not end in an even run of commas: ``(x,,)`` and
``(,,)`` are errors while ``(x,,,)`` parses. Like the Go lexer, which reads a
NUL character as the end of its input, a NUL where a token would start ends
the selector, and a NUL right after a token only separates it from the next.

Selectors are immutable values: equal when their requirements are equal, safe
to share between threads. Parse errors raise
:class:`~informers.errors.SelectorParseError`, whose message names the
selector, the position and the reason.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from informers.errors import SelectorParseError
from informers.wire.selectors._matching import Compiled, compile_requirements
from informers.wire.selectors.requirements import (
    _SET_OPERATORS,
    LabelRequirement,
    Operator,
    _label_key_problem,
)

__all__ = ["LabelSelector"]


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
        self._compiled_cache: Compiled | None = None

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

    def _compiled(self) -> Compiled:
        compiled = self._compiled_cache
        if compiled is None:
            compiled = self._compiled_cache = compile_requirements(self._requirements)
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
