"""tracker.mirror.schema: declared columns, extraction, table names, Secrets."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.wire.resources import DEPLOYMENTS, PODS, SECRETS, Resource
from tracker.errors import MirrorConfigError
from tracker.mirror.schema import (
    BUILTIN_COLUMNS,
    LAST_APPLIED_ANNOTATION,
    MAX_IDENTIFIER_LENGTH,
    Column,
    identifier,
    is_secret,
    parse_timestamp,
    prepare_object,
    table_name_for,
    validate_identifier,
)

POD: dict[str, Any] = {
    "metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "web"}},
    "spec": {"nodeName": "n1", "replicas": 3, "containers": [{"image": "nginx"}], "on": True},
    "status": {"phase": "Running", "score": 1.5},
}


# ------------------------------------------------------------------ columns


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        (Column("node", "spec.nodeName"), "n1"),
        (Column("phase", "status.phase"), "Running"),
        (Column("image", "spec.containers.0.image"), "nginx"),
        (Column("app", ("metadata", "labels", "app.kubernetes.io/name")), "web"),
        (Column("replicas", "spec.replicas", "integer"), 3),
        (Column("score", "status.score", "float"), 1.5),
        (Column("on", "spec.on", "boolean"), True),
        (Column("containers", "spec.containers", "json"), [{"image": "nginx"}]),
        (Column("replicas_text", "spec.replicas"), "3"),
        (Column("on_text", "spec.on"), "true"),
        (Column("spec_text", "spec.containers.0"), '{"image":"nginx"}'),
    ],
)
def test_a_column_extracts_its_value(column: Column, expected: Any) -> None:
    assert column.extract(POD) == expected


@pytest.mark.parametrize(
    "column",
    [
        Column("missing", "spec.nothing"),
        Column("deep", "spec.nodeName.deeper"),
        Column("past_end", "spec.containers.5.image"),
        Column("not_index", "spec.containers.x"),
        Column("wrong_int", "spec.nodeName", "integer"),
        Column("bool_is_not_int", "spec.on", "integer"),
        Column("wrong_bool", "spec.replicas", "boolean"),
        Column("wrong_float", "spec.nodeName", "float"),
        Column("wrong_time", "spec.nodeName", "timestamp"),
        Column("number_is_not_time", "spec.replicas", "timestamp"),
    ],
)
def test_a_missing_or_mistyped_value_is_null(column: Column) -> None:
    assert column.extract(POD) is None


def test_a_timestamp_column_reads_rfc3339_times_as_utc() -> None:
    from datetime import UTC, datetime

    column = Column("t", "v", "timestamp")
    assert column.extract({"v": "2024-05-01T12:00:00Z"}) == datetime(2024, 5, 1, 12, tzinfo=UTC)


def test_an_integer_beyond_64_bits_is_null() -> None:
    assert Column("n", "v", "integer").extract({"v": 2**63}) is None
    assert Column("n", "v", "integer").extract({"v": 2**63 - 1}) == 2**63 - 1


def test_a_float_column_takes_integers() -> None:
    assert Column("n", "v", "float").extract({"v": 2}) == 2.0
    assert Column("n", "v", "float").extract({"v": 10**400}) is None


@pytest.mark.parametrize("name", ["Node", "1node", "no-de", "no de", "x" * 64, "", "nœud"])
def test_a_column_name_must_be_a_safe_identifier(name: str) -> None:
    with pytest.raises(MirrorConfigError):
        Column(name, "spec.nodeName")


@pytest.mark.parametrize("name", BUILTIN_COLUMNS)
def test_a_column_may_not_reuse_a_builtin_name(name: str) -> None:
    with pytest.raises(MirrorConfigError, match="built-in"):
        Column(name, "spec.nodeName")


@pytest.mark.parametrize("path", ["", "spec..x", ".spec", ("spec", ""), 3])
def test_a_column_path_must_be_well_formed(path: Any) -> None:
    with pytest.raises(MirrorConfigError):
        Column("c", path)


def test_a_column_type_must_be_known() -> None:
    with pytest.raises(MirrorConfigError, match="type"):
        Column("c", "spec.x", "date")  # type: ignore[arg-type]


def test_columns_compare_by_their_parsed_path() -> None:
    assert Column("c", "spec.x") == Column("c", ("spec", "x"))
    assert Column("c", "spec.x").spec() == {"path": ["spec", "x"], "type": "text"}
    assert Column("c", ("a", "b.c")).path_text == '["a", "b.c"]'


# ------------------------------------------------------------ identifiers


def test_validate_identifier_accepts_and_rejects() -> None:
    assert validate_identifier("pods_2") == "pods_2"
    with pytest.raises(MirrorConfigError):
        validate_identifier("pods; DROP TABLE pods")


def test_identifier_shortens_long_names_keeping_them_distinct() -> None:
    a = identifier("ix", "t" * 70, "a")
    b = identifier("ix", "t" * 70, "b")
    assert a != b
    assert len(a) <= MAX_IDENTIFIER_LENGTH
    assert len(b) <= MAX_IDENTIFIER_LENGTH


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        (PODS, "pods"),
        (DEPLOYMENTS, "deployments_apps"),
        (Resource("cert-manager.io", "v1", "certificates", "Certificate"), None),
        (Resource("example.com", "v1", "widgets", "Widget"), "widgets_example_com"),
    ],
)
def test_table_names_derive_from_group_and_plural(resource: Resource, expected: str | None) -> None:
    name = table_name_for(resource)
    if expected is not None:
        assert name == expected
    else:
        assert re.fullmatch(r"certificates_cert_manager_io_[0-9a-f]{8}", name)


def test_a_long_group_gives_a_short_distinct_table_name() -> None:
    group = ".".join(["verylonggroupsegment"] * 6)
    a = table_name_for(Resource(group, "v1", "widgets", "Widget"))
    b = table_name_for(Resource(group, "v1", "gadgets", "Gadget"))
    assert a != b
    assert len(a) <= MAX_IDENTIFIER_LENGTH


@pytest.mark.parametrize(
    "resource",
    [
        Resource("", "v1", "pods; drop table pods", "Pod"),
        Resource("", "v1", "Pods", "Pod"),
        Resource("bad_group", "v1", "widgets", "Widget"),
        Resource("a..b", "v1", "widgets", "Widget"),
    ],
)
def test_a_resource_that_is_not_dns_named_is_refused(resource: Resource) -> None:
    with pytest.raises(MirrorConfigError):
        table_name_for(resource)


dns_label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
groups = st.one_of(st.just(""), st.lists(dns_label, min_size=1, max_size=4).map(".".join))


@given(st.lists(st.tuples(groups, dns_label), min_size=2, max_size=6, unique=True))
def test_property_table_names_are_valid_and_injective(pairs: list[tuple[str, str]]) -> None:
    names = [table_name_for(Resource(g, "v1", p, "K")) for g, p in pairs]
    for name in names:
        assert validate_identifier(name) == name
    assert len(set(names)) == len(names)


# ------------------------------------------------------------------ Secrets


def test_secret_data_is_stripped_without_mutating_the_object() -> None:
    secret = {
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": "s",
            "annotations": {LAST_APPLIED_ANNOTATION: '{"data":{"pw":"c2VjcmV0"}}', "keep": "me"},
        },
        "data": {"pw": "c2VjcmV0"},
        "stringData": {"pw": "secret"},
    }
    before = repr(secret)
    stored = prepare_object(secret, strip_secret_data=True)
    assert "data" not in stored
    assert "stringData" not in stored
    assert stored["metadata"]["annotations"] == {"keep": "me"}
    assert stored["type"] == "Opaque"
    assert repr(secret) == before
    assert prepare_object(secret, strip_secret_data=False) is secret


def test_is_secret_means_the_core_secrets() -> None:
    assert is_secret(SECRETS)
    assert not is_secret(PODS)
    assert not is_secret(Resource("example.com", "v1", "secrets", "Secret"))


# ---------------------------------------------------------------- timestamps


def test_timestamps_parse_to_aware_utc() -> None:
    assert parse_timestamp("2024-05-01T12:00:00Z") == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert parse_timestamp("2024-05-01T14:00:00+02:00") == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert parse_timestamp("2024-05-01T12:00:00") == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert parse_timestamp("yesterday") is None
    assert parse_timestamp(None) is None
    assert parse_timestamp(3) is None
