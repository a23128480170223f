"""Properties of the probe answers and of bind addresses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.toolkit.manager import HealthChecks
from informers.toolkit.manager._http import parse_bind_address

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_0123456789", min_size=1, max_size=12)


@given(
    checks=st.dictionaries(NAMES, st.one_of(st.none(), st.text(max_size=20)), max_size=6),
    verbose=st.booleans(),
    data=st.data(),
)
def test_the_answer_lists_every_check_once_and_fails_iff_one_fails(
    checks: dict[str, str | None], verbose: bool, data: st.DataObject
) -> None:
    registry = HealthChecks("readyz", 503)

    def make(reason: str | None) -> object:
        def check() -> None:
            if reason is not None:
                raise RuntimeError(reason)

        return check

    for name, reason in checks.items():
        registry.add(name, make(reason))  # type: ignore[arg-type]
    excluded = data.draw(
        st.lists(st.sampled_from(sorted(checks)), unique=True) if checks else st.just([])
    )
    query: dict[str, list[str]] = {"exclude": excluded} if excluded else {}
    if verbose:
        query["verbose"] = [""]
    status, _, raw = registry.answer("/readyz", query)
    body = raw.decode()
    failing = [n for n, r in checks.items() if r is not None and n not in excluded]
    assert status == (503 if failing else 200)
    if not failing and not verbose:
        assert body == "ok"
        return
    lines = body.splitlines()
    assert lines[-1] == f"readyz check {'failed' if failing else 'passed'}"

    def one_line(reason: str) -> str:
        return " ".join(reason.split()) or "RuntimeError"

    for name, reason in checks.items():
        if name in excluded:
            expected = f"[+]{name} excluded: ok"
        elif reason is None:
            expected = f"[+]{name} ok"
        else:
            expected = f"[-]{name} failed: {one_line(reason)}"
        assert lines.count(expected) == 1, (expected, lines)
    assert len(lines) == len(checks) + 1
    for name, reason in checks.items():
        one_status, _, one = registry.answer(f"/readyz/{name}", {})
        assert one_status == (200 if reason is None else 503)
        if reason is None:
            assert one == b"ok"
        else:
            assert one == f"internal server error: {one_line(reason)}\n".encode()


@given(
    host=st.sampled_from(["", "127.0.0.1", "0.0.0.0", "localhost", "[::1]"]),
    port=st.integers(0, 65535),
)
def test_bind_addresses_parse(host: str, port: int) -> None:
    assert parse_bind_address(f"{host}:{port}") == (host.strip("[]"), port)


@pytest.mark.parametrize("off", [None, "", "0", " 0 "])
def test_off(off: str | None) -> None:
    assert parse_bind_address(off) is None


@pytest.mark.parametrize("bad", ["8081", "host", "host:", ":x", ":65536", ":-1"])
def test_bad_bind_addresses(bad: str) -> None:
    with pytest.raises(ValueError, match="bind address"):
        parse_bind_address(bad)
