from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import informers
from informers.cli import EXIT_INTERRUPTED, main
from informers.cli.demo import run_demo

ROOT = Path(__file__).resolve().parents[3]


def test_demo_converges_through_churn_410_and_429() -> None:
    messages: list[str] = []
    report = run_demo(pods=60, writes=80, seed=3, progress=messages.append)
    assert [phase.name for phase in report.phases] == [
        "churn",
        "missed deletes (410 relist)",
        "throttled (429 Retry-After)",
    ]
    assert all(phase.cache_matches_server for phase in report.phases)
    assert report.events["added (initial list)"] == 60
    assert report.events["deleted (tombstone)"] >= 1  # the deletes the watch missed
    assert report.watch_errors["ExpiredError"] >= 1
    assert report.watch_errors["TooManyRequestsError"] >= 1
    assert sum(report.by_node.values()) == report.phases[-1].cached
    assert any("synced 60 pods" in message for message in messages)


def test_demo_command_prints_phases(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--pods", "30", "--writes", "40", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "phases" in out
    assert "tombstone" in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"kube-informers {informers.__version__}"


@pytest.mark.parametrize("command", ["demo", "serve"])
def test_every_subcommand_describes_itself(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]  # usage, then the description
    assert len(description.split()) >= 10, out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--pods", "0"], "must be at least 1, not 0"),
        (["demo", "--writes", "-3"], "must be at least 1, not -3"),
        (["demo", "--pods", "many"], "'many' is not a whole number"),
        (["serve", "--port", "65536"], "a port is 0 to 65535, not 65536"),
        (["serve", "--port", "-1"], "a port is 0 to 65535, not -1"),
    ],
)
def test_bad_arguments_are_argparse_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


#: ``python -m informers.cli`` with Ctrl-C restored to KeyboardInterrupt first.
_WITH_SIGINT = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('informers.cli', run_name='__main__', alter_sys=True)"
)


def _interrupt_when(
    argv: list[str], marker: str, signum: int = signal.SIGINT
) -> tuple[int, str, str]:
    """Run the command in a child, send ``signum`` (SIGINT: Ctrl-C) once
    ``marker`` is printed.

    The child starts with Ctrl-C raising KeyboardInterrupt, as in a
    terminal's foreground: a test run started in the background by a
    shell without job control (``.ci/run &``) inherits SIGINT ignored, and
    Python then raises no KeyboardInterrupt, so Ctrl-C would be tested
    against a process that cannot see it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    process = subprocess.Popen(
        [sys.executable, "-c", _WITH_SIGINT, *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    seen = []
    try:
        for line in process.stdout:
            seen.append(line)
            if marker in line:
                break
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, "".join(seen) + out, err


def test_ctrl_c_stops_the_demo_with_130_and_no_traceback() -> None:
    code, out, err = _interrupt_when(
        ["demo", "--pods", "5000", "--duration", "600"], "holds 5000 pods"
    )
    assert code == EXIT_INTERRUPTED, (out, err)
    assert "Traceback" not in err
    assert "kube-informers demo: interrupted" in err


def test_ctrl_c_stops_serve_with_130(tmp_path: Path) -> None:
    code, out, err = _interrupt_when(
        ["serve", "--kubeconfig", str(tmp_path / "kc")], "Press Ctrl-C to stop."
    )
    assert code == EXIT_INTERRUPTED, (out, err)
    assert "Traceback" not in err
    assert "kube-informers serve: stopped" in out


def test_sigterm_stops_serve_with_0(tmp_path: Path) -> None:
    # The same stop rule as mirror and watch: SIGTERM is the ordinary way to
    # stop a long-running command (0), Ctrl-C reports 130.
    code, out, err = _interrupt_when(
        ["serve", "--kubeconfig", str(tmp_path / "kc")], "Press Ctrl-C to stop.", signal.SIGTERM
    )
    assert code == 0, (out, err)
    assert "Traceback" not in err
    assert "kube-informers serve: stopped" in out


def test_demo_marks_its_faults_as_deliberate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--pods", "30", "--writes", "40", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("deliberate fault:") == 2
    assert "(deliberate fault, expected)" in out


# --- serve: TLS, tokens and the loopback warning (emulator-security) ---


def test_serve_help_names_the_security_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    for option in ("--tls", "--tls-cert", "--tls-key", "--tls-ca", "--token"):
        assert option in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-key", "k.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-ca", "ca.pem"], "--tls-ca needs --tls-cert and --tls-key"),
        (["--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"], "not found"),
    ],
)
def test_serve_tls_mistakes_are_one_line_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *argv, "--kubeconfig", str(tmp_path / "kc")]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "kc").exists()


def test_serve_tls_without_openssl_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no openssl there
    assert main(["serve", "--tls", "--kubeconfig", str(tmp_path / "kc")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "openssl" in err
    assert "--tls-cert and --tls-key" in err


def test_serve_warns_about_a_non_loopback_host_before_binding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The TLS files are missing, so serve stops before it binds anything:
    # the warning is printed, no non-loopback address is ever bound.
    argv = ["serve", "--host", "0.0.0.0", "--tls-cert", "/nonexistent/c.pem"]
    argv += ["--tls-key", "/nonexistent/k.pem", "--kubeconfig", str(tmp_path / "kc")]
    assert main(argv) == 1
    warning, error = capsys.readouterr().err.strip().splitlines()
    assert warning.startswith("kube-informers serve: warning: 0.0.0.0 is not a loopback address")
    assert "no authentication" in warning
    assert "not found" in error


def test_serve_with_cert_key_and_token_works_for_the_python_client(tmp_path: Path) -> None:
    import trustme
    from kubernetes import client, config

    ca = trustme.CA()
    pem, ca_file = tmp_path / "server.pem", tmp_path / "ca.pem"
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(pem))
    ca.cert_pem.write_to_path(str(ca_file))
    kubeconfig = tmp_path / "kc"
    argv = ["serve", "--tls-cert", str(pem), "--tls-key", str(pem), "--tls-ca", str(ca_file)]
    argv += ["--token", "cli-token-42", "--kubeconfig", str(kubeconfig)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "informers.cli", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        assert "serving at https://127.0.0.1:" in process.stdout.readline()
        assert "bearer token" in process.stdout.readline()
        assert "kubeconfig written" in process.stdout.readline()  # the file is complete now
        assert "cli-token-42" in kubeconfig.read_text()
        with config.new_client_from_config(config_file=str(kubeconfig)) as api:
            assert client.CoreV1Api(api).read_namespace("default").status.phase == "Active"
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "kube-informers serve: stopped" in out
    assert "cli-token-42" not in out + err


def test_serve_refuses_a_kubeconfig_in_a_missing_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 30 item 15: it used to create /nonexistent/dir/ silently.
    target = tmp_path / "no" / "such" / "kc"
    assert main(["serve", "--kubeconfig", str(target)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"kube-informers serve: --kubeconfig {target}: the directory {target.parent} does not "
        "exist (create it first, or name a file in an existing directory)"
    )
    assert not (tmp_path / "no").exists()
