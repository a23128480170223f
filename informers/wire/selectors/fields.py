"""Field selectors, parsed and evaluated client-side with the API server's
grammar (apimachinery ``pkg/fields``)::

    field=value   field==value   field!=value

comma-joined; in values, ``\\,`` ``\\=`` and ``\\\\`` escape a comma, an equals
sign and a backslash (other escapes, and bare ``,``/``=`` in a value, are
errors). A field missing from the fields matched compares as the empty
string.

The grammar does not know which fields a resource has: the API server
decides that per resource (so does the emulator, see
:func:`informers.testing.apiserver.supported_fields`).

Selectors are immutable values: equal when their requirements are equal, safe
to share between threads. Parse errors raise
:class:`~informers.errors.SelectorParseError`, whose message names the
selector and the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from informers.errors import SelectorParseError

__all__ = ["FieldRequirement", "FieldSelector"]


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

    The grammar does not know which fields exist: the server rejects unknown
    ones per resource (see the module documentation)."""

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
