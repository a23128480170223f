"""``kube-informers run``: bad input is one line and exit 1; SIGTERM to a
running process exits 0 after the reconcile in progress finished; a second
signal exits at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from informers.cli import main
from informers.testing.apiserver import ApiServer

ROOT = Path(__file__).resolve().parents[3]

NO_PROBES = ["--health-probe-bind-address", "0"]


def _write(path: Path, source: str) -> Path:
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("kube-informers run:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_a_missing_file_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.py"
    assert main(["run", str(missing), *NO_PROBES]) == 1
    assert _one_line(capsys.readouterr().err) == f"kube-informers run: {missing}: no such file"


def test_a_missing_module_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "no_such_module_for_kube_informers", *NO_PROBES]) == 1
    assert "no such file or module" in _one_line(capsys.readouterr().err)


def test_a_module_without_setup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "nosetup.py", "x = 1\n")
    assert main(["run", str(path), *NO_PROBES]) == 1
    assert "defines no setup(manager) function" in _one_line(capsys.readouterr().err)


def test_a_module_that_does_not_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "broken.py", "import no_such_module_for_kube_informers\n")
    assert main(["run", str(path), *NO_PROBES]) == 1
    assert "failed to load: ModuleNotFoundError" in _one_line(capsys.readouterr().err)


def test_a_setup_that_raises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], api_server: ApiServer
) -> None:
    kubeconfig = api_server.write_kubeconfig(tmp_path / "kubeconfig")
    path = _write(
        tmp_path / "raises.py",
        """
        def setup(manager):
            raise RuntimeError("no CRD installed")
        """,
    )
    args = ["run", str(path), "--kubeconfig", str(kubeconfig), *NO_PROBES]
    assert main(args) == 1
    line = _one_line(capsys.readouterr().err)
    assert line.endswith("setup(manager) failed: RuntimeError: no CRD installed")
    # --log-level debug adds the traceback.
    assert main([*args, "--log-level", "debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_leader_elect_needs_an_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "ok.py", "def setup(manager):\n    pass\n")
    assert main(["run", str(path), "--leader-elect", *NO_PROBES]) == 1
    assert "--leader-elect needs --leader-election-id" in _one_line(capsys.readouterr().err)


CONTROLLER = """
import sys, time
from informers.toolkit.runtime import InformerSource

def setup(manager):
    def reconcile(request):
        print("started", request.name, flush=True)
        time.sleep({work})  # the work in progress when the signal comes
        print("finished", request.name, flush=True)

    manager.controller("cm", reconcile, [InformerSource(manager.factory.configmaps())])
"""


def _spawn(tmp_path: Path, api_server: ApiServer, work: float) -> subprocess.Popen[str]:
    api_server.create("configmaps", {"metadata": {"name": "one", "namespace": "default"}})
    kubeconfig = api_server.write_kubeconfig(tmp_path / "kubeconfig")
    path = _write(tmp_path / "controller.py", CONTROLLER.replace("{work}", str(work)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "informers.cli", "run", str(path)]
    command += ["--kubeconfig", str(kubeconfig), "--health-probe-bind-address", "127.0.0.1:0"]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )


def test_sigterm_exits_0_after_the_reconcile_in_progress_finished(
    tmp_path: Path, api_server: ApiServer
) -> None:
    process = _spawn(tmp_path, api_server, work=1.0)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().split() == ["started", "one"]
        process.send_signal(signal.SIGTERM)
        out, err = _finish(process)
    finally:
        _reap(process)
    assert process.returncode == 0, err
    assert "finished one" in out
    assert "manager: stopped" in err
    assert "Traceback" not in err


def test_a_second_signal_exits_at_once(tmp_path: Path, api_server: ApiServer) -> None:
    process = _spawn(tmp_path, api_server, work=60.0)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().split() == ["started", "one"]
        process.send_signal(signal.SIGTERM)
        assert process.stderr is not None
        for line in process.stderr:  # the first signal is being handled
            if "stopping gracefully" in line:
                break
        process.send_signal(signal.SIGTERM)
        out, _ = _finish(process)
    finally:
        _reap(process)
    assert process.returncode == 1
    assert "finished" not in out


ONE_SHOT = """
from informers.toolkit.runtime import InformerSource

def setup(manager):
    def reconcile(request):
        manager.request_stop()

    manager.controller("cm", reconcile, [InformerSource(manager.factory.configmaps())])
"""


def test_a_one_shot_run_with_json_logs_and_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], api_server: ApiServer
) -> None:
    api_server.create("configmaps", {"metadata": {"name": "one", "namespace": "default"}})
    kubeconfig = api_server.write_kubeconfig(tmp_path / "kubeconfig")
    path = _write(tmp_path / "oneshot.py", ONE_SHOT)
    code = main(
        [
            "run",
            str(path),
            "--kubeconfig",
            str(kubeconfig),
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--log-format",
            "json",
        ]
    )
    assert code == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    records = [json.loads(ln) for ln in lines]
    assert {"ts", "level", "logger", "msg"} <= set(records[0])
    assert any(r["msg"] == "manager: stopped" for r in records)
    assert any("metrics endpoint serving on 127.0.0.1" in r["msg"] for r in records)


ELECTED = """
import os, sys, time
from informers.toolkit.runtime import InformerSource, current_context

def setup(manager):
    def reconcile(request):
        print("begin", os.getpid(), request.name, time.monotonic(), flush=True)
        current_context().wait(0.01)  # a little work
        print("end", os.getpid(), request.name, time.monotonic(), flush=True)

    manager.controller("cm", reconcile, [InformerSource(manager.factory.configmaps())])
"""


def _replica(path: Path, kubeconfig: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "informers.cli", "run", str(path)]
    command += ["--kubeconfig", str(kubeconfig), "--health-probe-bind-address", "0"]
    command += ["--leader-elect", "--leader-election-id", "cli-test"]
    command += ["--leader-election-namespace", "default"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )


def _finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The rest of the output of a process that is ending (read through its
    file objects: ``communicate`` would skip what they have buffered)."""
    assert process.stdout is not None
    assert process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()
    process.wait(60)
    return out, err


def _reap(process: subprocess.Popen[str] | None) -> None:
    """Kill (if still running), wait for and close ``process``."""
    if process is None:
        return
    process.kill()
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _wait_line(stream: Any, needle: str, count: int = 1) -> list[str]:
    """Read ``stream`` up to the ``count``-th line containing ``needle``."""
    seen = []
    for line in stream:
        seen.append(line)
        if needle in line:
            count -= 1
            if count == 0:
                return seen
    raise AssertionError(f"{needle!r} never came: {''.join(seen)[-2000:]}")


@pytest.mark.timeout(120)
def test_two_replicas_under_leader_elect_hand_over_without_overlap(
    tmp_path: Path, api_server: ApiServer
) -> None:
    for i in range(5):
        api_server.create("configmaps", {"metadata": {"name": f"cm-{i}", "namespace": "default"}})
    kubeconfig = api_server.write_kubeconfig(tmp_path / "kubeconfig")
    path = _write(tmp_path / "elected.py", ELECTED)
    first = _replica(path, kubeconfig)
    second: subprocess.Popen[str] | None = None
    try:
        assert first.stdout is not None
        assert first.stderr is not None
        led = _wait_line(first.stdout, "end")  # the first one leads and reconciles
        second = _replica(path, kubeconfig)
        assert second.stdout is not None
        assert second.stderr is not None
        _wait_line(second.stderr, "standing for leader election")  # synced: a warm standby
        first.send_signal(signal.SIGTERM)
        first_out, first_err = _finish(first)
        assert first.returncode == 0, first_err
        taken = _wait_line(second.stdout, "end", 5)  # the standby took over, all five
        second.send_signal(signal.SIGTERM)
        second_out, second_err = _finish(second)
        assert second.returncode == 0, second_err
    finally:
        _reap(first)
        _reap(second)
    intervals: dict[str, list[tuple[float, float]]] = {}
    begun: dict[tuple[str, str], float] = {}
    lines = [*led, *first_out.splitlines(), *taken, *second_out.splitlines()]
    for line in lines:
        what, pid, name, at = line.split()
        if what == "begin":
            begun[(pid, name)] = float(at)
        else:
            intervals.setdefault(pid, []).append((begun.pop((pid, name)), float(at)))
    assert len(intervals) == 2
    (a, a_runs), (b, b_runs) = intervals.items()
    assert len(b_runs) >= 5  # the standby reconciled every object from its cache
    for a_begin, a_end in a_runs:
        for b_begin, b_end in b_runs:
            assert a_end < b_begin or b_end < a_begin, (a, b)


def test_a_module_name_is_imported(
    tmp_path: Path, api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    api_server.create("configmaps", {"metadata": {"name": "one", "namespace": "default"}})
    kubeconfig = api_server.write_kubeconfig(tmp_path / "kubeconfig")
    package = tmp_path / "mycontrollers"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    _write(package / "oneshot.py", ONE_SHOT)
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["run", "mycontrollers.oneshot", "--kubeconfig", str(kubeconfig), *NO_PROBES]
    assert main([*args, "--log-level", "error"]) == 0


def test_a_bad_bind_address_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], api_server: ApiServer
) -> None:
    kubeconfig = api_server.write_kubeconfig(tmp_path / "kubeconfig")
    path = _write(tmp_path / "ok.py", "def setup(manager):\n    pass\n")
    args = ["run", str(path), "--kubeconfig", str(kubeconfig)]
    assert main([*args, "--health-probe-bind-address", "8081"]) == 1
    assert "bind address" in _one_line(capsys.readouterr().err)
