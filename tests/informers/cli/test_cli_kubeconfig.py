"""With no --kubeconfig, no $KUBECONFIG file, no ~/.kube/config and no
in-cluster configuration, the error names every place tried (issue 30 item
11)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from informers.cli import main
from informers.cli._kubeconfig import (
    default_kubeconfig_files,
    in_cluster_available,
    no_configuration,
)


@pytest.fixture
def nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    return tmp_path


@pytest.mark.parametrize(
    "command", [["watch", "pods"], ["mirror", "-r", "pods", "--db", "sqlite://"]]
)
def test_no_configuration_names_what_was_tried(
    command: list[str], nowhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--duration", "1"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "Invalid kube-config" not in line
    assert "$KUBECONFIG is not set" in line
    assert str(nowhere / ".kube" / "config") in line
    assert "$KUBERNETES_SERVICE_HOST and $KUBERNETES_SERVICE_PORT not set" in line
    assert "--kubeconfig" in line
    assert "--embedded" in line


def test_kubeconfig_list_and_in_cluster_checks(tmp_path: Path) -> None:
    real = tmp_path / "kc"
    real.write_text("{}")
    missing = str(tmp_path / "none")
    env = {"KUBECONFIG": os.pathsep.join([missing, str(real)])}
    assert default_kubeconfig_files(env) == [real]
    assert default_kubeconfig_files({"KUBECONFIG": missing}) == []
    assert missing in no_configuration({"KUBECONFIG": missing})
    token = tmp_path / "token"
    service = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    assert not in_cluster_available(service, str(token))
    assert f"no in-cluster service account token at {token}" in no_configuration(
        service, str(token)
    )
    token.write_text("t")
    assert in_cluster_available(service, str(token))
