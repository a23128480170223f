"""The commands against an API server that accepts connections and never
answers (issue 30 item 1): ``--duration``, Ctrl-C and SIGTERM end them
promptly, with one line on stderr and a non-zero exit."""

from __future__ import annotations

import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
    # a name only discovery resolves: discovery must not wait on the silent server either
    "watch-discovered": ["watch", "widgets.example.com"],
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
        f"kube-informers {COMMANDS[command][0]}: the API server at http://127.0.0.1:{silent.port} "
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
        f"kube-informers {COMMANDS[command][0]}: stopped by {name} while waiting for the API "
        "server "
        f"at http://127.0.0.1:{silent.port}"
    ]


class _StallingHandler(http.server.BaseHTTPRequestHandler):
    """Answers ``/version`` and the reachability check's one-object list; any
    other request (the informer's list) waits, silent, until the server
    closes."""

    release: threading.Event

    def do_GET(self) -> None:
        if self.path == "/version":
            self._answer({"major": "1", "minor": "31"})
            return
        if "limit=1&" in self.path + "&" and "watch" not in self.path:
            list_ = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}}
            self._answer({**list_, "items": []})
            return
        self.server.stalled.set()  # type: ignore[attr-defined]
        self.release.wait()

    def _answer(self, document: dict[str, object]) -> None:
        body = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def stalling() -> Iterator[Any]:
    release = threading.Event()
    handler = type("Handler", (_StallingHandler,), {"release": release})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.stalled = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, name="stalling-server")
    thread.start()
    try:
        yield server
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def _start_at(argv: list[str], tmp_path: Path, url: str) -> subprocess.Popen[str]:
    kubeconfig = write_kubeconfig(tmp_path / "kc", url)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
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


def test_duration_ends_a_mirror_whose_list_never_answers(tmp_path: Path, stalling: Any) -> None:
    # The server answers the reachability check, then never the informer's list.
    url = f"http://127.0.0.1:{stalling.server_address[1]}"
    began = time.monotonic()
    process = _start_at([*COMMANDS["mirror"], "--duration", "1"], tmp_path, url)
    code, out, err = _finish(process, timeout=1 + 5)
    assert time.monotonic() - began < 1 + 5
    assert stalling.stalled.is_set()
    assert code == 1, (out, err)
    assert err.strip().splitlines() == [
        "kube-informers mirror: the initial sync of pods did not finish within --duration "
        "(+2.5 s): the API server did not answer its list"
    ]


def test_sigterm_ends_a_mirror_whose_list_never_answers(tmp_path: Path, stalling: Any) -> None:
    url = f"http://127.0.0.1:{stalling.server_address[1]}"
    process = _start_at(COMMANDS["mirror"], tmp_path, url)
    assert stalling.stalled.wait(30)  # the initial sync waits on the list now
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    code, out, err = _finish(process, timeout=5)
    assert time.monotonic() - began < 5
    assert code == 1, (out, err)
    assert err.strip().splitlines() == [
        "kube-informers mirror: stopped by SIGTERM before the initial sync of pods finished"
    ]
