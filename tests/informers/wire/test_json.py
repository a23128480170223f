"""informers.wire._json.loads answers exactly what json.loads answers, whichever
parser does the work."""

from __future__ import annotations

import importlib
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.wire import _json


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1 is not 1.0 here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


scalars = (
    st.none()
    | st.booleans()
    | st.integers()  # unbounded: beyond 64 bits too
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False)
    | st.text()
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(documents)
def test_loads_equals_json_loads(doc: Any) -> None:
    data = json.dumps(doc).encode()
    assert same(_json.loads(data), json.loads(data))


@given(st.binary(max_size=40))
def test_loads_of_any_bytes_agrees_or_raises_value_error(data: bytes) -> None:
    try:
        expected = json.loads(data)
    except (ValueError, RecursionError):
        with pytest.raises(ValueError):  # noqa: PT011 - whichever message the parser gives
            _json.loads(data)
    else:
        assert same(_json.loads(data), expected)


@pytest.mark.parametrize(
    "data",
    [
        b"[18446744073709551616]",  # 2**64: orjson would answer a float
        b"[-9223372036854775809]",  # below -2**63: likewise
        b'{"a": 123456789012345678901234567890}',
        b"[9223372036854775807, 18446744073709551615, -9223372036854775808]",
        b"[1e400, -1e400]",  # infinities: orjson refuses
        b"[NaN, Infinity]",  # not JSON, but json.loads accepts them
        b'["\\ud800"]',  # a lone surrogate
        b'{"a": 1, "a": 2}',  # the last duplicate wins
        b' {"a": []} \r\n',
        b'"1234567890123456789012345"',  # digits in a string are just text
    ],
)
def test_loads_matches_on_the_inputs_orjson_treats_differently(data: bytes) -> None:
    assert same(_json.loads(data), json.loads(data))


@pytest.mark.parametrize("data", [b'"\xff"', b"{", b"", b"[1,]", b"[" * 100_000])
def test_loads_raises_value_error_for_what_is_not_json(data: bytes) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - whichever message the parser gives
        _json.loads(data)


def test_text_input_is_accepted() -> None:
    assert _json.loads('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}


def test_environment_variable_selects_the_standard_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBE_INFORMERS_JSON", "stdlib")
    try:
        stdlib = importlib.reload(_json)
        assert stdlib.BACKEND == "json"
        assert same(stdlib.loads(b"[18446744073709551616]"), [18446744073709551616])
    finally:
        monkeypatch.delenv("KUBE_INFORMERS_JSON")
        importlib.reload(_json)


def test_msgspec_is_used_when_installed() -> None:
    # The fast extra installs msgspec (and the test extra orjson): CI
    # exercises the fast path; the orjson path is tested below.
    pytest.importorskip("msgspec")
    assert _json.BACKEND == "msgspec"


ODD_INPUTS = [
    b"[18446744073709551616]",
    b"[-9223372036854775809]",
    b'{"a": 123456789012345678901234567890}',
    b"[1e400, -1e400, 1.7976931348623157e309, 4.9e-325, -0.0, -0]",
    b"[NaN, Infinity, -Infinity]",
    b'["\\ud800", "\\uDFFF", "\\ud83d\\ude00"]',
    b'{"a": 1, "a": 2}',
    b"\xef\xbb\xbf[1]",
    '{"a": 1}'.encode("utf-16"),
    b'"a\tb"',
    b'"\\u0000"',
    b"1" * 5000,
    b"[" * 200 + b"]" * 200,
    b'"\xff"',
    b"[1,]",
]


@pytest.mark.parametrize("backend", ["msgspec", "orjson", "stdlib"])
def test_every_backend_answers_as_json_loads(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if backend != "stdlib":
        pytest.importorskip(backend)
    monkeypatch.setenv("KUBE_INFORMERS_JSON", backend)
    try:
        module = importlib.reload(_json)
        assert ("json" if backend == "stdlib" else backend) == module.BACKEND
        for data in ODD_INPUTS:
            try:
                expected = json.loads(data)
            except (ValueError, RecursionError):
                with pytest.raises(ValueError):  # noqa: PT011 - whichever message
                    module.loads(data)
            else:
                assert same(module.loads(data), expected), data[:40]
        for doc in ({"metadata": {"name": "x", "labels": {"a": "b"}}, "n": [2**70, 1.5, None]},):
            data = json.dumps(doc).encode()
            assert same(module.loads(data), json.loads(data))
    finally:
        monkeypatch.delenv("KUBE_INFORMERS_JSON")
        importlib.reload(_json)


@pytest.mark.parametrize("offset", [0, 1, 10, 18, 19, 40])
def test_a_long_number_across_a_scan_window_edge_is_seen(offset: int) -> None:
    # Bodies larger than the scan window are scanned in overlapping windows.
    number = b"18446744073709551616"  # 2**64, 20 digits
    pad = _json._WINDOW - offset
    data = b'["' + b"x" * pad + b'", ' + number + b"]"
    assert _json._has_long_number(data)
    assert same(_json.loads(data), json.loads(data))
    assert not _json._has_long_number(data.replace(number, b"1844674407.370955161"))
