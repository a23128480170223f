"""The commands against an API server that accepts connections and never
answers (issue 30 item 1): ``--duration``, Ctrl-C and SIGTERM end them
promptly, with one line on stderr and a non-zero exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from informers.cli import EXIT_INTERRUPTED
from informers.testing.apiserver._kubeconfig import write_kubeconfig
from tests.helpers import SilentServer

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def _start(argv: list[str], tmp_path: Path, silent: SilentServer) -> subprocess.Popen[str]:
    kubeconfig = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{silent.port}")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    # SIGINT raises KeyboardInterrupt in the child even when the test run
    # inherited it ignored (see test_cli._interrupt_when).
    program = (
        "import signal, sys\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from informers.cli import main\nsys.exit(main(sys.argv[1:]))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", program, *argv, "--kubeconfig", str(kubeconfig)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _finish(process: subprocess.Popen[str], timeout: float) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out, err


COMMANDS = {
    "watch": ["watch", "pods"],
    "mirror": ["mirror", "-r", "pods", "--db", "sqlite://"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_duration_ends_a_command_on_a_silent_server(
    command: str, tmp_path: Path, silent: SilentServer
) -> None:
    began = time.monotonic()
    process = _start([*COMMANDS[command], "--duration", "2"], tmp_path, silent)
    code, out, err = _finish(process, timeout=2 + 5)
    assert time.monotonic() - began < 2 + 5
    assert silent.accepted >= 1
    assert code == 1, (out, err)
    assert err.strip().splitlines() == [
        f"kube-informers {command}: the API server at http://127.0.0.1:{silent.port} "
        "did not answer within 4 s"
    ]


SIGNALS = {"SIGINT": (signal.SIGINT, EXIT_INTERRUPTED), "SIGTERM": (signal.SIGTERM, 1)}


@pytest.mark.parametrize("name", sorted(SIGNALS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_signal_ends_a_command_waiting_on_a_silent_server(
    command: str, name: str, tmp_path: Path, silent: SilentServer
) -> None:
    signum, code = SIGNALS[name]
    process = _start(COMMANDS[command], tmp_path, silent)
    assert silent.wait_accepted(1, timeout=30)  # the command waits on the silent server now
    began = time.monotonic()
    process.send_signal(signum)
    returned, out, err = _finish(process, timeout=5)
    assert time.monotonic() - began < 5
    assert returned == code, (out, err)
    assert err.strip().splitlines() == [
        f"kube-informers {command}: stopped by {name} while waiting for the API server "
        f"at http://127.0.0.1:{silent.port}"
    ]
