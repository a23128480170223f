"""``kube-informers mirror`` and ``kube-informers watch``, end to end: the
embedded emulator and a served one (a kubeconfig), SQLite files, the error
cases, JSON output and Ctrl-C in a child process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from informers.cli import EXIT_INTERRUPTED, main
from informers.testing import ApiServer
from informers.testing.apiserver._kubeconfig import write_kubeconfig
from informers.wire.resources import DEPLOYMENTS, NAMESPACES, PODS
from tests.helpers import POD_SPEC

ROOT = Path(__file__).resolve().parents[3]


def _json_lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _rows(db_file: Path, table: str) -> int:
    engine = sa.create_engine(f"sqlite:///{db_file}")
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(f'SELECT count(*) FROM "{table}"')).scalar_one())
    finally:
        engine.dispose()


def test_mirror_embedded_rows_equal_the_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db_file = tmp_path / "cluster.db"
    argv = ["mirror", "--embedded", "-r", "pods", "-r", "deployments.apps"]
    argv += ["--column", "pods=status.phase", "--db", f"sqlite:///{db_file}"]
    argv += ["--objects", "30", "--duration", "1.5", "--output", "json"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    (result,) = _json_lines(out)  # one plain JSON object, nothing else
    assert result["stopped_by"] == "duration"
    kinds = {kind["resource"]: kind for kind in result["kinds"]}  # type: ignore[attr-defined]
    assert set(kinds) == {"pods", "deployments.apps"}
    for kind in kinds.values():
        assert kind["match"], kind
        assert kind["db_rows"] == kind["api_objects"] == _rows(db_file, kind["table"])
    assert kinds["pods"]["api_objects"] > 0


def test_mirror_a_served_emulator_through_a_kubeconfig(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db_file = tmp_path / "served.db"
    with ApiServer() as server:
        server.create(NAMESPACES, {"metadata": {"name": "shop"}})
        for name in ("a", "b", "c"):
            pod = {"metadata": {"name": name}, "spec": {"nodeName": "n1", **POD_SPEC}}
            server.create(PODS, pod, "shop")
        server.create(
            DEPLOYMENTS,
            {
                "metadata": {"name": "web"},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": dict(POD_SPEC)},
                },
            },
            "shop",
        )
        kubeconfig = write_kubeconfig(tmp_path / "kc", server.url)
        argv = ["mirror", "--kubeconfig", str(kubeconfig), "-r", "po", "-r", "deploy"]
        argv += ["-c", "pods=phase:status.phase", "--db", f"sqlite:///{db_file}"]
        argv += ["--duration", "0.5", "--output", "json"]
        assert main(argv) == 0
    (result,) = _json_lines(capsys.readouterr().out)
    counts = {kind["resource"]: kind["db_rows"] for kind in result["kinds"]}  # type: ignore[attr-defined]
    assert counts == {"pods": 3, "deployments.apps": 1}
    engine = sa.create_engine(f"sqlite:///{db_file}")
    try:
        with engine.connect() as conn:
            phases = conn.execute(sa.text("SELECT name, phase FROM pods ORDER BY name")).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in phases] == [("a", "Pending"), ("b", "Pending"), ("c", "Pending")]


def _kubeconfig_to(tmp_path: Path, url: str) -> str:
    return str(write_kubeconfig(tmp_path / "kc", url))


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("unreachable", "cannot reach the API server at http://127.0.0.1:1"),
        ("missing kubeconfig", "no such file"),
        ("bad kubeconfig", "cannot read"),
        ("bad context", "bad kubeconfig"),
        ("unknown resource", "unknown resource 'podz'"),
        ("unwritable database", "unable to open database file"),
        ("unreachable database", "Connection refused"),
        ("bad column", "column name"),
    ],
)
def test_mirror_errors_are_one_clear_line(
    case: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    resource = "pods"
    extra: list[str] = ["--embedded"]
    if case == "unreachable":
        extra = ["--kubeconfig", _kubeconfig_to(tmp_path, "http://127.0.0.1:1")]
    elif case == "missing kubeconfig":
        extra = ["--kubeconfig", str(tmp_path / "nothing")]
    elif case == "bad kubeconfig":
        (tmp_path / "bad").write_text("[[[\n")
        extra = ["--kubeconfig", str(tmp_path / "bad")]
    elif case == "bad context":
        extra = ["--kubeconfig", _kubeconfig_to(tmp_path, "http://127.0.0.1:1")]
        extra += ["--context", "nope"]
    elif case == "unknown resource":
        resource = "podz"
    elif case == "unwritable database":
        db = f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.db'}"
    elif case == "unreachable database":
        db = "postgresql://user:secret@127.0.0.1:1/mirror"
    elif case == "bad column":
        extra += ["--column", "pods=bad name:status.phase"]
    argv = ["mirror", "-r", resource, "--db", db, "--duration", "0.5", *extra]
    assert main(argv) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("kube-informers mirror: ")
    assert message in lines[0]
    assert "Traceback" not in captured.err
    assert "secret" not in captured.err  # a password in the URL is never printed
    if case == "unknown resource":
        assert "did you mean" in lines[0]


def _run_child(argv: list[str], code: str = "") -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    program = f"{code}\nimport sys\nfrom informers.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.Popen(
        [sys.executable, "-c", program, *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_mirror_without_the_extra_names_it(tmp_path: Path) -> None:
    # The child runs as if SQLAlchemy were not installed.
    process = _run_child(
        ["mirror", "--embedded", "-r", "pods", "--db", f"sqlite:///{tmp_path / 'x.db'}"],
        "import sys\nsys.modules['sqlalchemy'] = None",
    )
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1, (out, err)
    assert err.strip().splitlines() == [
        "kube-informers mirror: the mirror needs SQLAlchemy: pip install 'kube-informers[mirror]'"
    ]


def test_ctrl_c_stops_the_mirror_with_130_and_no_traceback(tmp_path: Path) -> None:
    db_file = tmp_path / "ctrl-c.db"
    process = _run_child(
        ["mirror", "--embedded", "-r", "pods", "-r", "deploy", "--db", f"sqlite:///{db_file}"]
    )
    assert process.stdout is not None
    seen = []
    try:
        for line in process.stdout:
            seen.append(line)
            if "(Ctrl-C to stop)" in line:
                break
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    out = "".join(seen) + out
    assert process.returncode == EXIT_INTERRUPTED, (out, err)
    assert "Traceback" not in err
    assert "API vs database" in out
    assert "stopped by SIGINT" in out
    assert _rows(db_file, "pods") > 0


def test_sigterm_stops_the_mirror_with_0(tmp_path: Path) -> None:
    db_file = tmp_path / "term.db"
    process = _run_child(
        ["mirror", "--embedded", "-r", "pods", "--db", f"sqlite:///{db_file}", "--output", "json"]
    )
    assert process.stderr is not None
    try:
        for line in process.stderr:
            if "Ctrl-C to stop" in line:
                break
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, (out, err)
    (result,) = _json_lines(out)
    assert result["stopped_by"] == "SIGTERM"
    assert all(kind["match"] for kind in result["kinds"])  # type: ignore[attr-defined]


def test_watch_embedded_prints_events_and_index_counts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["watch", "pods", "--embedded", "--index", "node=spec.nodeName"]
    argv += ["--objects", "20", "--duration", "1", "--output", "json"]
    assert main(argv) == 0
    lines = _json_lines(capsys.readouterr().out)
    events = [line["event"] for line in lines if "event" in line]
    added = [event for event in events if event["type"] == "ADDED"]  # type: ignore[index]
    assert len(added) >= 16  # the pods created before the informer started
    assert all(set(event) == {"type", "key", "resourceVersion"} for event in events)  # type: ignore[arg-type]
    (synced,) = [line for line in lines if "synced" in line]
    node_counts = synced["indexes"]["node"]  # type: ignore[index]
    assert sum(node_counts.values()) == synced["objects"]
    summary = lines[-1]["summary"]
    assert summary["stopped_by"] == "duration"  # type: ignore[index]
    assert sum(summary["indexes"]["node"].values()) == summary["objects"]  # type: ignore[index]


def test_watch_rich_shows_a_live_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["watch", "po", "--embedded", "-i", "node=spec.nodeName", "--duration", "0.5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "recent events" in out
    assert "index node" in out


@pytest.mark.parametrize("command", ["mirror", "watch"])
def test_new_subcommands_describe_themselves(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    description = capsys.readouterr().out.split("\n\n")[1]
    assert len(description.split()) >= 10


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["mirror", "-r", "pods", "--duration", "0"], "above 0"),
        (["mirror", "-r", "pods", "--objects", "0"], "must be at least 1"),
        (["mirror", "-r", "pods", "--column", "phase"], "is not RESOURCE=[NAME:]PATH[:TYPE]"),
        (["mirror", "-r", "pods", "--column", "pods=a:b:long"], "type 'long' is not one of"),
        (["mirror", "-r", "pods", "--column", "pods=a..b"], "empty key"),
        (["watch", "pods", "--index", "n=a[x]"], "list index"),
        (["watch", "pods", "--index", "spec.nodeName"], "is not NAME=PATH"),
        (["watch", "pods", "--duration", "soon"], "'soon' is not a number"),
    ],
)
def test_bad_options_are_argparse_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
