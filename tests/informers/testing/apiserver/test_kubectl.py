"""A second client not written here: the real kubectl drives the emulator
through the kubeconfig ``serve`` writes.

Each test starts its own server and stops it. kubectl runs as a subprocess
with its own discovery cache directory. Without kubectl on PATH these tests
skip, except under CI (env ``CI`` set), where they fail.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from informers.testing.apiserver import Access, ApiServer, TLSConfig
from informers.testing.apiserver._discovery import SERVER_GIT_VERSION
from informers.testing.apiserver._kubeconfig import write_kubeconfig
from informers.wire.resources import (
    CONFIGMAPS,
    DEPLOYMENTS,
    NAMESPACES,
    SECRETS,
    STATEFULSETS,
    Resource,
)
from tests.helpers import configmap

pytestmark = pytest.mark.kubectl

KUBECTL = shutil.which("kubectl")
ROOT = Path(__file__).resolve().parents[4]
TIMEOUT = 60.0


@pytest.fixture
def kubectl_path() -> str:
    if KUBECTL is None:
        reason = "kubectl is not on PATH (install kubectl, or Debian's kubernetes-client)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run the kubectl tests")
        pytest.skip(reason)
    return KUBECTL


_MINORS: dict[str, int] = {}


def _client_minor(binary: str) -> int:
    """The client's minor version (``kubectl version --client``), cached."""
    if binary not in _MINORS:
        out = subprocess.run(
            [binary, "version", "--client", "-o", "json"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=True,
        ).stdout
        _MINORS[binary] = int(json.loads(out)["clientVersion"]["minor"].rstrip("+"))
    return _MINORS[binary]


class Kubectl:
    """Runs kubectl against one kubeconfig, with a private cache directory.

    ``validate`` holds the flags ``create -f``/``apply`` need with this
    client: before 1.29 kubectl validates against OpenAPI v2, which the
    emulator does not serve (1.29+ leave validation to the server through
    OpenAPI v3), so older clients (such as a distribution's fallback package)
    get ``--validate=false``.
    """

    def __init__(self, binary: str, kubeconfig: Path, cache: Path) -> None:
        self.binary = binary
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(cache)}
        self.minor = _client_minor(binary)
        self.validate = ["--validate=false"] if self.minor < 29 else []

    def run(self, *args: str, stdin: str | None = None, ok: bool = True) -> str:
        result = subprocess.run(
            [self.binary, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=TIMEOUT,
            check=False,
        )
        if ok:
            assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result.stdout if ok else result.stdout + result.stderr

    def run_verbose(self, *args: str) -> tuple[str, str]:
        result = subprocess.run(
            [self.binary, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=TIMEOUT,
            check=False,
        )
        assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result.stdout, result.stderr

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [self.binary, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )


@pytest.fixture
def server() -> Iterator[ApiServer]:
    with ApiServer() as api:
        yield api


@pytest.fixture
def kubectl(kubectl_path: str, server: ApiServer, tmp_path: Path) -> Kubectl:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
    return Kubectl(kubectl_path, kubeconfig, tmp_path / "cache")


class LineReader:
    """Reads a stream's lines in a named thread; ``next(timeout)`` waits for one."""

    def __init__(self, stream: IO[str], name: str) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stream = stream
        self._thread = threading.Thread(target=self._pump, name=name, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        for line in self._stream:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def next(self, timeout: float = TIMEOUT) -> str:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no output line within {timeout} s")
        if line is None:
            pytest.fail("the stream ended")
        return line

    def rest(self, timeout: float = TIMEOUT) -> list[str]:
        """Every remaining line, once the stream has ended."""
        lines = []
        while (line := self._lines.get(timeout=timeout)) is not None:
            lines.append(line)
        return lines

    def join(self) -> None:
        self._thread.join(TIMEOUT)


def _stop(process: subprocess.Popen[str], *readers: LineReader) -> None:
    process.terminate()
    try:
        process.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(TIMEOUT)
    for reader in readers:
        reader.join()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def test_kubectl_version(kubectl: Kubectl) -> None:
    version = json.loads(kubectl.run("version", "-o", "json"))
    assert version["serverVersion"]["gitVersion"] == SERVER_GIT_VERSION
    assert version["serverVersion"]["minor"] == "32"


def test_kubectl_api_resources(kubectl: Kubectl, server: ApiServer) -> None:
    server.register_resource(
        Resource("example.com", "v1", "widgets", "Widget", short_names=("wd",))
    )
    lines = kubectl.run("api-resources", "--no-headers").splitlines()
    by_name = {line.split()[0]: line.split() for line in lines}
    assert {"pods", "namespaces", "configmaps", "secrets", "deployments", "leases"} <= set(by_name)
    assert by_name["deployments"][1:] == ["deploy", "apps/v1", "true", "Deployment"]
    assert by_name["widgets"][1:] == ["wd", "example.com/v1", "true", "Widget"]
    namespaced = kubectl.run("api-resources", "--namespaced=false", "-o", "name").split()
    assert "namespaces" in namespaced
    assert "pods" not in namespaced


def test_kubectl_get_pods_namespaces_configmaps(kubectl: Kubectl, server: ApiServer) -> None:
    pod = {
        "metadata": {"name": "web-1", "namespace": "default"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
    }
    server.create(Resource("", "v1", "pods", "Pod"), pod, "default")
    server.create(CONFIGMAPS, configmap("settings", "default", a="1", b="2"), "default")
    pods = kubectl.run("get", "pods", "-n", "default").splitlines()
    assert pods[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert pods[1].split()[:2] == ["web-1", "0/1"]
    namespaces = kubectl.run("get", "namespaces", "-o", "name").split()
    assert {"namespace/default", "namespace/kube-system"} <= set(namespaces)
    configmaps = kubectl.run("get", "configmaps", "-A").splitlines()
    assert configmaps[0].split() == ["NAMESPACE", "NAME", "DATA", "AGE"]
    assert ["default", "settings", "2"] in [line.split()[:3] for line in configmaps]
    as_json = json.loads(kubectl.run("get", "configmap", "settings", "-o", "json"))
    assert as_json["data"] == {"a": "1", "b": "2"}


MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: from-file
  namespace: default
data:
  greeting: hello
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports: [{containerPort: 80}]
        env: [{name: MODE, value: slow}, {name: LEVEL, value: "1"}]
      - name: sidecar
        image: busybox:1
"""


def test_kubectl_create_from_file(kubectl: Kubectl, server: ApiServer, tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST)
    out = kubectl.run("create", *kubectl.validate, "-f", str(manifest))
    assert "configmap/from-file created" in out
    assert "deployment.apps/web created" in out
    assert server.get(CONFIGMAPS, "from-file", "default")["data"] == {"greeting": "hello"}
    deployment = server.get(DEPLOYMENTS, "web", "default")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["metadata"]["uid"]
    if kubectl.minor >= 27:  # --subresource is new in 1.27
        status = kubectl.run("get", "deployment", "web", "--subresource=status", "-o", "name")
        assert status.split() == ["deployment.apps/web"]
    again = kubectl.run("create", *kubectl.validate, "-f", str(manifest), ok=False)
    assert "AlreadyExists" in again or "already exists" in again


def test_kubectl_imperative_create_sends_protobuf(kubectl: Kubectl, server: ApiServer) -> None:
    kubectl.run("create", "namespace", "demo")
    kubectl.run("create", "configmap", "cfg", "-n", "demo", "--from-literal=k=v")
    kubectl.run("create", "secret", "generic", "s", "-n", "demo", "--from-literal=pw=hunter2")
    assert server.get(NAMESPACES, "demo")["metadata"]["name"] == "demo"
    assert server.get(CONFIGMAPS, "cfg", "demo")["data"] == {"k": "v"}
    secret = server.get(SECRETS, "s", "demo")
    assert base64.b64decode(secret["data"]["pw"]) == b"hunter2"


def test_kubectl_imperative_create_of_workloads(kubectl: Kubectl, server: ApiServer) -> None:
    kubectl.run("create", "deployment", "web", "--image=nginx", "--port=80", "--replicas=2")
    kubectl.run("create", "service", "clusterip", "web", "--tcp=80:8080")
    kubectl.run("create", "serviceaccount", "robot")
    kubectl.run("create", "job", "once", "--image=busybox", "--", "echo", "hi")
    if kubectl.minor >= 21:  # older clients create batch/v1beta1 CronJobs
        kubectl.run("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *")
    kubectl.run("create", "ingress", "web", "--rule=example.com/*=web:80")
    deployment = server.get(DEPLOYMENTS, "web", "default")
    assert deployment["spec"]["replicas"] == 2
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert (container["image"], container["ports"]) == (
        "nginx",
        [{"containerPort": 80, "protocol": "TCP"}],  # the protocol is a server default
    )
    assert container["imagePullPolicy"] == "Always"
    service = server.get(Resource("", "v1", "services", "Service"), "web", "default")
    assert service["spec"]["ports"][0]["targetPort"] == 8080
    assert service["spec"]["clusterIP"].startswith("10.")
    assert service["spec"]["clusterIP"] in kubectl.run("get", "service", "web")
    job = server.get(Resource("batch", "v1", "jobs", "Job"), "once", "default")
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo", "hi"]
    if kubectl.minor >= 21:
        cronjob = server.get(Resource("batch", "v1", "cronjobs", "CronJob"), "tick", "default")
        assert cronjob["spec"]["schedule"] == "*/5 * * * *"
    ingress = server.get(
        Resource("networking.k8s.io", "v1", "ingresses", "Ingress"), "web", "default"
    )
    assert ingress["spec"]["rules"][0]["host"] == "example.com"
    names = kubectl.run("get", "deployments,services,serviceaccounts", "-o", "name").split()
    assert {"deployment.apps/web", "service/web", "serviceaccount/robot"} <= set(names)


def test_kubectl_apply_twice_sends_a_strategic_merge_patch(
    kubectl: Kubectl, server: ApiServer, tmp_path: Path
) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST)
    assert "deployment.apps/web created" in kubectl.run(
        "apply", "--server-side=false", *kubectl.validate, "-f", str(manifest)
    )
    first = server.get(DEPLOYMENTS, "web", "default")
    annotations = first["metadata"]["annotations"]
    assert "kubectl.kubernetes.io/last-applied-configuration" in annotations
    manifest.write_text(
        MANIFEST.replace("nginx:1.25", "nginx:1.26").replace("value: slow", "value: fast")
    )
    out = kubectl.run("apply", "--server-side=false", *kubectl.validate, "-f", str(manifest))
    assert "deployment.apps/web configured" in out
    assert "configmap/from-file unchanged" in out
    second = server.get(DEPLOYMENTS, "web", "default")
    containers = second["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "sidecar"]
    assert containers[0]["image"] == "nginx:1.26"
    assert containers[0]["env"] == [
        {"name": "MODE", "value": "fast"},
        {"name": "LEVEL", "value": "1"},
    ]
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    manifest.write_text(
        MANIFEST.replace("nginx:1.25", "nginx:1.26")
        .replace("env: [{name: MODE, value: slow}, ", "env: [")
        .replace("      - name: sidecar\n        image: busybox:1\n", "")
    )
    assert "deployment.apps/web configured" in kubectl.run(
        "apply", "--server-side=false", *kubectl.validate, "-f", str(manifest)
    )
    third = server.get(DEPLOYMENTS, "web", "default")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in third] == ["web"]
    assert third[0]["env"] == [{"name": "LEVEL", "value": "1"}]
    assert third[0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]  # defaulted
    applied = json.loads(
        second["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    )
    assert applied["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"


def test_kubectl_delete(kubectl: Kubectl, server: ApiServer) -> None:
    server.create(CONFIGMAPS, configmap("doomed", "default"), "default")
    server.create(CONFIGMAPS, configmap("kept", "default"), "default")
    assert 'configmap "doomed" deleted' in kubectl.run(
        "delete", "configmap", "doomed", "-n", "default"
    )
    names = [o["metadata"]["name"] for o in server.list_objects(CONFIGMAPS, "default")]
    assert "doomed" not in names
    assert "kept" in names
    missing = kubectl.run("delete", "configmap", "doomed", "-n", "default", ok=False)
    assert "NotFound" in missing or "not found" in missing


def _next_event(reader: LineReader) -> list[str]:
    """The (event type, name) of the next watch line, skipping header lines."""
    while (fields := reader.next().split())[0] == "EVENT":
        pass
    return fields[:2]


def test_kubectl_get_watch(kubectl: Kubectl, server: ApiServer) -> None:
    server.create(CONFIGMAPS, configmap("before", "default"), "default")
    process = kubectl.popen("get", "configmaps", "-n", "default", "-w", "--output-watch-events")
    assert process.stdout is not None
    assert process.stderr is not None
    out = LineReader(process.stdout, "kubectl-watch-stdout")
    err = LineReader(process.stderr, "kubectl-watch-stderr")
    try:
        assert _next_event(out) == ["ADDED", "before"]
        server.create(CONFIGMAPS, configmap("during", "default"), "default")
        assert _next_event(out) == ["ADDED", "during"]
        updated = server.get(CONFIGMAPS, "during", "default")
        server.update(CONFIGMAPS, {**updated, "data": {"x": "1"}})
        assert _next_event(out) == ["MODIFIED", "during"]
        server.delete(CONFIGMAPS, "before", "default")
        assert _next_event(out) == ["DELETED", "before"]
    finally:
        _stop(process, out, err)


def test_kubectl_get_watch_prints_one_table(kubectl: Kubectl, server: ApiServer) -> None:
    server.create(CONFIGMAPS, configmap("before", "default", k="v"), "default")
    process = kubectl.popen("get", "configmaps", "-n", "default", "-w")
    assert process.stdout is not None
    assert process.stderr is not None
    out = LineReader(process.stdout, "kubectl-watch-stdout")
    err = LineReader(process.stderr, "kubectl-watch-stderr")
    try:
        lines = [out.next(), out.next()]  # the list: header and one row
        server.create(CONFIGMAPS, configmap("during", "default"), "default")
        lines.append(out.next())
        server.delete(CONFIGMAPS, "before", "default")
        lines.append(out.next())
    finally:
        _stop(process, out, err)
    rows = [line.split() for line in lines]
    assert [row[0] for row in rows] == ["NAME", "before", "during", "before"]
    assert rows[0] == ["NAME", "DATA", "AGE"]
    assert [row[1] for row in rows[1:]] == ["1", "0", "1"]  # the DATA column, every time


def test_kubectl_scale(kubectl: Kubectl, server: ApiServer) -> None:
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
    }
    spec = {"selector": {"matchLabels": {"app": "web"}}, "template": template}
    server.create(DEPLOYMENTS, {"metadata": {"name": "web"}, "spec": spec}, "default")
    server.create(STATEFULSETS, {"metadata": {"name": "db"}, "spec": spec}, "default")
    assert "deployment.apps/web scaled" in kubectl.run("scale", "deployment", "web", "--replicas=3")
    assert server.get(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 3
    assert "0/3" in kubectl.run("get", "deployment", "web")
    kubectl.run("scale", "statefulset/db", "--current-replicas=1", "--replicas=2")
    assert server.get(STATEFULSETS, "db", "default")["spec"]["replicas"] == 2
    refused = kubectl.run(
        "scale", "statefulset/db", "--current-replicas=1", "--replicas=4", ok=False
    )
    assert "Expected replicas to be 1, was 2" in refused
    assert server.get(STATEFULSETS, "db", "default")["spec"]["replicas"] == 2


def test_kubectl_get_chunk_size(kubectl: Kubectl, server: ApiServer) -> None:
    for number in range(5):
        server.create(CONFIGMAPS, configmap(f"cm-{number}", "default"), "default")
    out, log = kubectl.run_verbose(
        "get", "configmaps", "-n", "default", "--chunk-size=2", "-o", "name", "-v=6"
    )
    assert out.split() == [f"configmap/cm-{n}" for n in range(5)]
    assert "limit=2" in log
    assert "continue=" in log


def test_serve_subcommand_with_kubectl(kubectl_path: str, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "serve" / "kubeconfig"
    kubeconfig.parent.mkdir()  # serve refuses a directory that does not exist
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "informers.cli",
            "serve",
            "--port",
            "0",
            "--kubeconfig",
            str(kubeconfig),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    out = LineReader(process.stdout, "serve-stdout")
    err = LineReader(process.stderr, "serve-stderr")
    try:
        banner = out.next()
        assert "serving at http://127.0.0.1:" in banner
        assert str(kubeconfig.resolve()) in out.next()
        assert f"KUBECONFIG={kubeconfig.resolve()} kubectl get pods -A" in out.next()
        client = Kubectl(kubectl_path, kubeconfig, tmp_path / "cache")
        client.run("create", "namespace", "from-kubectl")
        names = client.run("get", "namespaces", "-o", "name").split()
        assert {"namespace/default", "namespace/from-kubectl"} <= set(names)
        process.terminate()  # SIGTERM: a clean stop
        assert process.wait(TIMEOUT) == 0
        assert out.rest()[-1] == "kube-informers serve: stopped"
    finally:
        _stop(process, out, err)


def test_kubectl_diff_and_server_dry_run_change_nothing(
    kubectl: Kubectl, server: ApiServer, tmp_path: Path
) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST)
    kubectl.run("apply", "--server-side=false", *kubectl.validate, "-f", str(manifest))
    before = server.get(DEPLOYMENTS, "web", "default")
    manifest.write_text(MANIFEST.replace("nginx:1.25", "nginx:diffed"))
    if kubectl.minor >= 29:  # older clients need OpenAPI v2 to diff
        diff = kubectl.run("diff", "-f", str(manifest), ok=False)
        assert "+        image: nginx:diffed" in diff
    if kubectl.minor >= 27:  # older clients check dry-run support in OpenAPI v2
        kubectl.run("set", "image", "deployment/web", "web=nginx:dry", "--dry-run=server")
    assert server.get(DEPLOYMENTS, "web", "default") == before


def _versioned_kubectls() -> list[Path]:
    """Other kubectl minor versions installed next to ``kubectl`` (``kubectl.1.NN``)."""
    if KUBECTL is None:
        return []
    directory = Path(KUBECTL).resolve().parent
    return sorted(directory.glob("kubectl.1.[0-9]*"), key=lambda p: int(p.name.split(".")[-1]))


@pytest.mark.parametrize("binary", _versioned_kubectls(), ids=lambda p: p.name)
def test_kubectl_versions_smoke(binary: Path, server: ApiServer, tmp_path: Path) -> None:
    kubectl = Kubectl(str(binary), write_kubeconfig(tmp_path / "kc", server.url), tmp_path / "c")
    validate = kubectl.validate
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST)
    kubectl.run("create", "namespace", "smoke")
    kubectl.run("create", "configmap", "cfg", "-n", "smoke", "--from-literal=k=v")
    kubectl.run("apply", *validate, "-f", str(manifest))
    manifest.write_text(MANIFEST.replace("nginx:1.25", "nginx:1.26"))
    assert "deployment.apps/web configured" in kubectl.run("apply", *validate, "-f", str(manifest))
    containers = server.get(DEPLOYMENTS, "web", "default")["spec"]["template"]["spec"]["containers"]
    assert [c["image"] for c in containers] == ["nginx:1.26", "busybox:1"]
    assert server.get(CONFIGMAPS, "cfg", "smoke")["data"] == {"k": "v"}
    assert "cfg" in kubectl.run("get", "configmaps", "-n", "smoke")
    kubectl.run("scale", "deployment/web", "--replicas=4")
    assert server.get(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 4


# --- HTTPS and bearer tokens (emulator-security) ---

SECURE_TOKEN = "kubectl-test-token-0123456789"
VIEWER_TOKEN = "kubectl-viewer-token"


def _read_only_viewer(access: Access) -> bool:
    return access.user != "viewer" or access.verb in ("get", "list", "watch")


@pytest.fixture
def secure_server(tmp_path: Path) -> Iterator[ApiServer]:
    import trustme

    ca = trustme.CA()
    pem, ca_file = tmp_path / "server.pem", tmp_path / "ca.pem"
    ca.issue_cert("127.0.0.1", "localhost").private_key_and_cert_chain_pem.write_to_path(str(pem))
    ca.cert_pem.write_to_path(str(ca_file))
    tls = TLSConfig(pem, pem, ca_file)
    tokens = {SECURE_TOKEN: "alice", VIEWER_TOKEN: "viewer"}
    with ApiServer(tls=tls, tokens=tokens, authorizer=_read_only_viewer) as api:
        yield api


def _secure_kubectl(binary: str, server: ApiServer, tmp_path: Path, token: str) -> Kubectl:
    kubeconfig = server.write_kubeconfig(tmp_path / f"kubeconfig-{token[:8]}", token=token)
    return Kubectl(binary, kubeconfig, tmp_path / "cache")


def test_kubectl_over_https_with_a_token(
    kubectl_path: str, secure_server: ApiServer, tmp_path: Path
) -> None:
    kubectl = _secure_kubectl(kubectl_path, secure_server, tmp_path, SECURE_TOKEN)
    version = json.loads(kubectl.run("version", "-o", "json"))
    assert version["serverVersion"]["gitVersion"] == SERVER_GIT_VERSION
    kubectl.run("create", "configmap", "settings", "--from-literal=a=1")
    assert secure_server.get(CONFIGMAPS, "settings", "default")["data"] == {"a": "1"}
    assert "settings" in kubectl.run("get", "configmaps")
    # A watch streams over TLS, and the server notices when kubectl goes away.
    process = kubectl.popen("get", "configmaps", "-w", "--output-watch-events")
    assert process.stdout is not None
    assert process.stderr is not None
    out = LineReader(process.stdout, "kubectl-tls-watch")
    err = LineReader(process.stderr, "kubectl-tls-watch-err")
    try:
        assert secure_server.wait_for_watch_count(1, timeout=TIMEOUT)
        secure_server.create(CONFIGMAPS, configmap("late", "default"), "default")
        seen = [out.next() for _ in range(3)]  # the header, the listed one, then the event
        assert seen[-1].split()[:2] == ["ADDED", "late"], seen
    finally:
        _stop(process, out, err)
    assert secure_server.wait_for_watch_count(0, timeout=TIMEOUT)


def test_kubectl_with_a_wrong_token_is_unauthorized(
    kubectl_path: str, secure_server: ApiServer, tmp_path: Path
) -> None:
    kubectl = _secure_kubectl(kubectl_path, secure_server, tmp_path, "not-the-token")
    # Discovery fails first; client-go words a 401 there as a real cluster's
    # expired token reads: "the server has asked for the client to provide
    # credentials".
    assert "error: You must be logged in to the server" in kubectl.run("get", "pods", ok=False)
    raw = kubectl.run("get", "--raw", "/api/v1/namespaces", ok=False)
    assert "You must be logged in to the server (Unauthorized)" in raw
    created = kubectl.run("create", "configmap", "nope", ok=False)
    assert "Unauthorized" in created
    assert secure_server.list_objects(CONFIGMAPS) == []


def test_kubectl_as_a_read_only_user_is_forbidden_to_write(
    kubectl_path: str, secure_server: ApiServer, tmp_path: Path
) -> None:
    kubectl = _secure_kubectl(kubectl_path, secure_server, tmp_path, VIEWER_TOKEN)
    assert "No resources found" in kubectl.run("get", "configmaps", ok=False)
    output = kubectl.run("create", "configmap", "nope", "--from-literal=a=1", ok=False)
    assert "Forbidden" in output or "forbidden" in output
    assert (
        'configmaps is forbidden: User "viewer" cannot create resource "configmaps" '
        'in API group "" in the namespace "default"'
    ) in output
    output = kubectl.run("delete", "namespace", "default", ok=False)
    assert "Error from server (Forbidden)" in output
    assert secure_server.get(NAMESPACES, "default")


def test_serve_tls_and_token_with_kubectl(kubectl_path: str, tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("serve --tls makes its certificate with the openssl command")
    kubeconfig = tmp_path / "kubeconfig"
    command = [sys.executable, "-m", "informers.cli", "serve", "--tls", "--token", SECURE_TOKEN]
    process = subprocess.Popen(
        [*command, "--kubeconfig", str(kubeconfig)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    out = LineReader(process.stdout, "serve-tls-stdout")
    err = LineReader(process.stderr, "serve-tls-stderr")
    try:
        assert "serving at https://127.0.0.1:" in out.next()
        assert "bearer token" in out.next()
        assert str(kubeconfig.resolve()) in out.next()
        text = kubeconfig.read_text()
        assert "certificate-authority-data" in text
        assert SECURE_TOKEN in text
        kubectl = Kubectl(kubectl_path, kubeconfig, tmp_path / "cache")
        kubectl.run("create", "namespace", "over-tls")
        assert "namespace/over-tls" in kubectl.run("get", "namespaces", "-o", "name").split()
        wrong = kubeconfig.with_name("wrong")
        wrong.write_text(text.replace(SECURE_TOKEN, "wrong-token"))
        intruder = Kubectl(kubectl_path, wrong, tmp_path / "cache2")
        raw = intruder.run("get", "--raw", "/api/v1/namespaces", ok=False)
        assert "You must be logged in to the server (Unauthorized)" in raw
        process.terminate()
        assert process.wait(TIMEOUT) == 0
        assert out.rest()[-1] == "kube-informers serve: stopped"
    finally:
        _stop(process, out, err)
