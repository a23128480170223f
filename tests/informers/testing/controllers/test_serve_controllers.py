"""``kube-informers serve`` runs the controllers unless told not to."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from kubernetes import client, config, watch

from informers.cli import main

ROOT = Path(__file__).resolve().parents[4]
TIMEOUT = 60.0


def test_serve_runs_the_controllers(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    command = [sys.executable, "-m", "informers.cli", "serve", "--kubeconfig", str(kubeconfig)]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert "serving at" in process.stdout.readline()
        with config.new_client_from_config(config_file=str(kubeconfig)) as api_client:
            apps = client.AppsV1Api(api_client)
            body = {
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                    },
                },
            }
            apps.create_namespaced_deployment("default", body)
            done = threading.Event()
            w = watch.Watch()
            for event in w.stream(
                apps.list_namespaced_deployment, "default", timeout_seconds=int(TIMEOUT)
            ):
                status = event["object"].status
                if status is not None and status.available_replicas == 2:
                    done.set()
                    w.stop()
            assert done.is_set()
        process.terminate()
        _, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, err


def test_serve_help_names_no_controllers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "--no-controllers" in capsys.readouterr().out
