"""Field paths of ``--index`` and ``--column``: kubectl's escaped dots and
list indexes, a warning when a path matches nothing, typed mirror columns,
and dropping the columns a re-run no longer declares (issue 30 items 6-8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from informers.cli import main
from informers.cli._paths import join_path, split_path, unmatched_warning, value_at
from informers.cli.mirror import parse_column
from informers.testing import ApiServer
from informers.testing.apiserver._kubeconfig import write_kubeconfig
from informers.wire.resources import PODS

LABEL = "app.kubernetes.io/name"
APP_COLUMN = "pods=app:metadata.labels.app\\.kubernetes\\.io/name"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("spec.nodeName", ("spec", "nodeName")),
        ("metadata.labels.app\\.kubernetes\\.io/name", ("metadata", "labels", LABEL)),
        ("status.containerStatuses[0].ready", ("status", "containerStatuses", "0", "ready")),
        ("spec.containers.0.image", ("spec", "containers", "0", "image")),
        ("a[1][2]", ("a", "1", "2")),
    ],
)
def test_split_path_reads_kubectls_form(text: str, parts: tuple[str, ...]) -> None:
    assert split_path(text) == parts


@pytest.mark.parametrize("text", ["", "a..b", "a.", ".a", "[0]", "a[x]", "a[0]b", "a\\b"])
def test_split_path_refuses_malformed_paths(text: str) -> None:
    with pytest.raises(ValueError, match="path"):
        split_path(text)


@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=5))
def test_join_path_and_split_path_round_trip(parts: list[str]) -> None:
    assert split_path(join_path(parts)) == tuple(parts)


def test_unmatched_warning() -> None:
    pods = [{"metadata": {"labels": {LABEL: "web"}}}] * 3
    unescaped = split_path("metadata.labels.app.kubernetes.io/name")
    message = unmatched_warning("--index n=x", unescaped, pods, "pods")
    assert message is not None
    assert "matched nothing in the first 3 pods" in message
    assert "escape them" in message
    assert unmatched_warning("--index n=x", ("metadata", "labels", LABEL), pods, "pods") is None
    assert unmatched_warning("--index n=x", unescaped, [], "pods") is None  # nothing to tell by
    assert value_at(pods[0], ("metadata", "labels", LABEL)) == "web"


def test_parse_column_names_paths_and_types() -> None:
    assert parse_column("pods=status.phase") == ("pods", "phase", "status.phase", "text")
    assert parse_column("pods=ready:status.containerStatuses[0].ready:bool") == (
        "pods",
        "ready",
        "status.containerStatuses[0].ready",
        "boolean",
    )
    assert parse_column("pods=metadata.labels.app\\.kubernetes\\.io/name") == (
        "pods",
        "app_kubernetes_io_name",
        "metadata.labels.app\\.kubernetes\\.io/name",
        "text",
    )
    assert parse_column("pods=spec.priority:int")[3] == "integer"


def _pod(name: str, node: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {LABEL: f"app-{name}"}},
        "spec": {
            "nodeName": node,
            "hostNetwork": name == "a",
            "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 8080}]}],
        },
    }


@pytest.fixture
def served(tmp_path: Path) -> Any:
    with ApiServer() as server:
        for name, node in (("a", "n1"), ("b", "n1"), ("c", "n2")):
            server.create(PODS, _pod(name, node), "default")
        yield write_kubeconfig(tmp_path / "kc", server.url)


def _json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_watch_indexes_a_label_key_with_dots(
    served: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["watch", "pods", "--kubeconfig", str(served), "--duration", "1", "--output", "json"]
    argv += ["-i", "name=metadata.labels.app\\.kubernetes\\.io/name"]
    argv += ["-i", "port=spec.containers[0].ports[0].containerPort"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    (synced,) = [line for line in _json_lines(captured.out) if "synced" in line]
    assert synced["indexes"]["name"] == {"app-a": 1, "app-b": 1, "app-c": 1}
    assert synced["indexes"]["port"] == {"8080": 3}
    assert "warning" not in captured.err


def test_watch_warns_when_a_path_matches_nothing(
    served: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["watch", "pods", "--kubeconfig", str(served), "--duration", "1", "--output", "json"]
    argv += ["-i", "name=metadata.labels.app.kubernetes.io/name"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert (
        "kube-informers watch: warning: --index name=metadata.labels.app.kubernetes.io/name "
        "matched nothing in the first 3 pods" in err
    )
    assert "app\\.kubernetes\\.io/name" in err  # says how to write it


def _mirror(kubeconfig: Path, db: str, *extra: str) -> list[str]:
    argv = ["mirror", "--kubeconfig", str(kubeconfig), "-r", "pods", "--db", db]
    return [*argv, "--duration", "0.5", "--output", "json", *extra]


def _table(db_file: Path, query: str) -> list[tuple[Any, ...]]:
    engine = sa.create_engine(f"sqlite:///{db_file}")
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(sa.text(query)).all()]
    finally:
        engine.dispose()


def test_mirror_columns_have_types_and_can_be_dropped(
    served: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db_file = tmp_path / "typed.db"
    db = f"sqlite:///{db_file}"
    columns = [
        "-c",
        "pods=host:spec.hostNetwork:bool",
        "-c",
        "pods=port:spec.containers[0].ports[0].containerPort:int",
        "-c",
        "pods=created:metadata.creationTimestamp:timestamp",
        "-c",
        APP_COLUMN,
    ]
    assert main(_mirror(served, db, *columns)) == 0
    assert "warning" not in capsys.readouterr().err
    rows = _table(
        db_file, "SELECT name, host, port, typeof(port), app, created FROM pods ORDER BY name"
    )
    assert [row[:5] for row in rows] == [
        ("a", 1, 8080, "integer", "app-a"),
        ("b", 0, 8080, "integer", "app-b"),
        ("c", 0, 8080, "integer", "app-c"),
    ]
    assert all(row[5] for row in rows)  # a timestamp, not NULL
    # Fewer columns: an error that names the way forward ...
    assert main(_mirror(served, db, "-c", APP_COLUMN)) == 1
    assert "--drop-undeclared-columns" in capsys.readouterr().err
    # ... which drops them
    fewer = _mirror(
        served,
        db,
        "-c",
        APP_COLUMN,
        "--drop-undeclared-columns",
    )
    assert main(fewer) == 0
    assert _table(db_file, "SELECT name, app FROM pods ORDER BY name") == [
        ("a", "app-a"),
        ("b", "app-b"),
        ("c", "app-c"),
    ]
    names = {row[1] for row in _table(db_file, "PRAGMA table_info(pods)")}
    assert not names & {"host", "port", "created"}
    assert "app" in names
