"""``kubectl events`` (the real kubectl) shows what an EventRecorder wrote
to the emulator, with the counts of repeated events. Skips without kubectl
on PATH, except under CI (env ``CI`` set), where it fails."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from informers.testing import ApiServer
from informers.toolkit.events import EventRecorder
from informers.wire.resources import PODS
from tests.helpers import new_pod

pytestmark = pytest.mark.kubectl

KUBECTL = shutil.which("kubectl")


def _kubectl(server: ApiServer, tmp_path: Path, *args: str) -> str:
    if KUBECTL is None:
        if os.environ.get("CI"):
            pytest.fail("kubectl is not on PATH; CI must run the kubectl tests")
        pytest.skip("kubectl is not on PATH")
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(tmp_path / "cache")}
    result = subprocess.run(
        [KUBECTL, *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_kubectl_events_shows_the_counts(tmp_path: Path) -> None:
    with ApiServer() as server:
        pod = server.create(PODS, new_pod("web"))
        api = server.api_client()
        try:
            with EventRecorder(api, "shop-controller") as recorder:
                for _ in range(4):
                    recorder.event(pod, "Warning", "BackOff", "restarting the container")
                assert recorder.flush(10)
                recorder.event(pod, "Warning", "BackOff", "restarting the container")
                recorder.event(pod, "Normal", "Pulled", "image pulled")
                assert recorder.flush(10)
        finally:
            api.close()
        out = _kubectl(server, tmp_path, "events", "-n", "default", "--for", "pod/web")
    lines = out.splitlines()
    assert lines[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    backoff = next(line for line in lines if "BackOff" in line)
    assert "(x5 over" in backoff
    assert "Pod/web" in backoff
    assert "restarting the container" in backoff
    pulled = next(line for line in lines if "Pulled" in line)
    assert "(x" not in pulled
