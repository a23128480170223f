"""``kube-informers serve`` without kubectl: the subprocess serves, its
kubeconfig works for the official Python client, and it stops cleanly on
SIGINT and SIGTERM."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes import client, config

from informers.cli import main

ROOT = Path(__file__).resolve().parents[4]
TIMEOUT = 60.0


def _serve(kubeconfig: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "informers.cli", "serve", "--kubeconfig", str(kubeconfig)]
    return subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_kubeconfig_works_for_the_python_client(tmp_path: Path, signum: int) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    process = _serve(kubeconfig)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()  # printed once the kubeconfig is written
        assert "serving at http://127.0.0.1:" in banner
        api_client = config.new_client_from_config(config_file=str(kubeconfig))
        with api_client:
            names = [ns.metadata.name for ns in client.CoreV1Api(api_client).list_namespace().items]
        assert "default" in names
        process.send_signal(signum)
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=TIMEOUT)
    # SIGTERM is the ordinary way to stop a server (0); Ctrl-C reports 130.
    assert process.returncode == (130 if signum == signal.SIGINT else 0), err
    assert out.splitlines()[-1] == "kube-informers serve: stopped"


def test_serve_on_a_busy_port_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["serve", "--port", str(port), "--kubeconfig", str(tmp_path / "kc")])
    assert code == 1
    assert "cannot listen on 127.0.0.1" in capsys.readouterr().err
    assert not (tmp_path / "kc").exists()


def test_serve_help_names_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = capsys.readouterr().out
    for option in ("--port", "--host", "--kubeconfig"):
        assert option in text
