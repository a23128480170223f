"""What the ``kube-informers`` subcommands share: stopping on signals,
connecting to a cluster (a kubeconfig or the embedded emulator), checking it
answers, logging (``--log-format``, ``--log-level``), and the embedded
emulator's generated churn.

Used by :mod:`informers.cli.mirror`, :mod:`informers.cli.watch` and
:mod:`informers.cli.demo`; not a public API of the package.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import urllib3

from informers.cli import _kubeconfig
from informers.cli.exits import EXIT_INTERRUPTED
from informers.errors import ApiError, InformersError
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.rest.transport import ApiClientTransport, RequestAborter
from informers.toolkit.runtime.context import current_log_fields
from informers.util.logfmt import configure_logging
from informers.wire.resources import DEPLOYMENTS, NAMESPACES, PODS, Resource

__all__ = [
    "LOG_LEVELS",
    "MIRROR_EXTRA_HINT",
    "add_cluster_options",
    "add_logging_options",
    "configured_logging",
    "port_number",
    "positive_float",
    "positive_int",
    "safe_url",
    "EMBEDDED_NAMESPACES",
    "REACHABLE_GRACE",
    "REACHABLE_TIMEOUT",
    "EXIT_INTERRUPTED",
    "Churn",
    "Cluster",
    "CommandError",
    "StopSignals",
    "check_answers",
    "check_reachable",
    "connect",
    "print_json",
    "seed_cluster",
]

log = logging.getLogger(__name__)


#: The namespaces the embedded emulator's generated objects live in.
EMBEDDED_NAMESPACES = ("default", "shop", "payments")


class CommandError(InformersError):
    """A subcommand cannot go on: ``str(error)`` is the one line to print on
    stderr, ``exit_code`` the status to exit with (1 by default)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def print_json(value: Any) -> None:
    """Print ``value`` as one line of plain JSON on stdout, flushed."""
    print(json.dumps(value, sort_keys=True, separators=(",", ":")), flush=True)


class StopSignals:
    """While entered (in the main thread), SIGINT and SIGTERM set
    :attr:`event` instead of raising; the previous handlers are restored on
    exit. :attr:`interrupted` is true after a SIGINT (Ctrl-C). Events given
    to :meth:`also_set` are set too (so a helper thread waiting on its own
    event wakes up on a signal)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._received: list[int] = []  # appended by the handler (main thread only)
        self._previous: dict[int, Any] = {}
        self._also: list[threading.Event] = []  # main thread only

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self._received.append(signum)
        self.event.set()
        for event in self._also:
            event.set()

    def also_set(self, event: threading.Event) -> None:
        """Set ``event`` too when a signal arrives (at once if one arrived
        already). Call from the main thread."""
        self._also.append(event)
        if self._received:
            event.set()

    @property
    def reason(self) -> str:
        """``"SIGINT"``, ``"SIGTERM"``, or ``""`` before any signal."""
        if self.interrupted:
            return "SIGINT"
        return "SIGTERM" if self._received else ""

    @property
    def interrupted(self) -> bool:
        """Whether a SIGINT arrived."""
        return signal.SIGINT in self._received

    @property
    def received(self) -> bool:
        """Whether any stop signal arrived."""
        return bool(self._received)

    def __enter__(self) -> StopSignals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


#: The values of ``--log-level``.
LOG_LEVELS = ("debug", "info", "warning", "error")


def add_logging_options(parser: argparse.ArgumentParser, default_level: str = "error") -> None:
    """``--log-format text|json`` and ``--log-level``, read by
    :func:`configured_logging`."""
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="log lines on stderr as text with key=value context, or one JSON object each "
        "(default text)",
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        help=f"the least severe log lines shown (default {default_level}"
        + ("; warning with --verbose)" if default_level == "error" else ")"),
    )
    parser.set_defaults(log_default_level=default_level)


@contextlib.contextmanager
def configured_logging(args: argparse.Namespace) -> Iterator[logging.Handler]:
    """While entered, log on stderr as ``--log-format`` says, at
    ``--log-level`` (default: the subcommand's, ``warning`` for ``--verbose``);
    every line carries its structured context, and a reconcile's lines the
    reconcile's (see :func:`informers.util.logfmt.configure_logging`).
    Yields the handler; the root logger's handlers and level are restored
    afterwards."""
    level = args.log_level or (
        "warning" if getattr(args, "verbose", False) else args.log_default_level
    )
    root = logging.getLogger()
    previous = root.level
    handler = configure_logging(args.log_format, level, context=current_log_fields)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


@dataclass
class Cluster:
    """An API client and, for ``--embedded``, the emulator it talks to.
    :meth:`close` closes the client and stops the emulator."""

    api_client: Any
    url: str
    server: Any = None
    _closed: bool = field(default=False, repr=False)

    def close(self) -> None:
        """Close the client, then stop the emulator (if any). Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.api_client.close()
        if self.server is not None:
            self.server.stop()


def _without_contents(message: str) -> str:
    """The kubernetes client's kubeconfig errors quote the offending section
    (``.../{'name': 'u', 'user': {'token': ...}}/user``), credentials
    included: keep what comes before the first quoted mapping or list."""
    cut = min((i for i in (message.find("{"), message.find("[")) if i >= 0), default=-1)
    if cut < 0:
        lines = message.splitlines()
        return lines[0] if lines else ""
    kept = message[:cut].splitlines()
    head = kept[0] if kept else ""
    return head.rstrip("/ ") + " (section not shown: it may hold credentials)"


def connect(kubeconfig: str | None, context: str | None, embedded: bool) -> Cluster:
    """A :class:`Cluster`: the embedded emulator (started on a free loopback
    port) or the cluster a kubeconfig names (``kubeconfig`` or the usual
    default, ``context`` or its current one), else the in-cluster
    configuration of a pod. Raises :class:`CommandError` for a kubeconfig
    that cannot be read or a context it does not have, and, when there is no
    configuration at all, one naming every place tried."""
    if embedded:
        from informers.testing.apiserver import ApiServer

        server = ApiServer()
        server.start()
        return Cluster(server.api_client(), server.url, server)
    from kubernetes import config
    from kubernetes.config.config_exception import ConfigException

    if kubeconfig is not None and not os.path.isfile(kubeconfig):
        raise CommandError(f"kubeconfig {kubeconfig!r}: no such file")
    if kubeconfig is None and not _kubeconfig.default_kubeconfig_files():
        if not _kubeconfig.in_cluster_available():
            raise CommandError(_kubeconfig.no_configuration())
        in_cluster = _kubeconfig.in_cluster_client()
        return Cluster(in_cluster, str(in_cluster.configuration.host))
    try:
        new_client: Any = config.new_client_from_config
        client = new_client(config_file=kubeconfig, context=context)
    except ConfigException as error:
        raise CommandError(f"bad kubeconfig: {_without_contents(str(error))}") from None
    except Exception as error:  # noqa: BLE001 - the loader's failures become one clear line
        # A file that is missing, not YAML, or not shaped like a kubeconfig: the
        # loader raises whatever it trips on (OSError, yaml errors, KeyError,
        # IndexError, TypeError...), and quotes the file's contents in some.
        where = kubeconfig or "the default kubeconfig"
        first = _without_contents(str(error)) if str(error) else ""
        raise CommandError(f"cannot read {where}: {type(error).__name__}: {first}") from None
    return Cluster(client, str(client.configuration.host))


#: Seconds the reachability check waits for the API server to connect and
#: answer its one-object list.
REACHABLE_TIMEOUT = 10.0
#: Seconds past the end of ``--duration`` the reachability check may still wait.
REACHABLE_GRACE = 2.0


def check_answers(
    cluster: Cluster, *, signals: StopSignals | None = None, deadline: float | None = None
) -> None:
    """GET ``/version``, so that an API server that cannot be reached or does
    not answer is one clear :class:`CommandError` before anything else asks
    it (discovery, to resolve a resource name). Any HTTP answer, an error
    status included, will do. Bounded as :func:`check_reachable`."""
    transport = ApiClientTransport(cluster.api_client)
    # Any answer will do: what it refuses is said by the requests that follow.
    with contextlib.suppress(ApiError):
        _bounded(
            cluster,
            signals,
            deadline,
            lambda aborter, limit: transport.request(
                "GET", "/version", read_timeout=limit, aborter=aborter
            ),
        )


def check_reachable(
    cluster: Cluster,
    resource: Resource,
    namespace: str | None,
    *,
    signals: StopSignals | None = None,
    deadline: float | None = None,
) -> None:
    """List one object of ``resource``, so that an API server that cannot be
    reached, does not answer, or refuses the kind, is one clear
    :class:`CommandError` before anything starts.

    Blocks on one HTTP request (one attempt), for at most
    :data:`REACHABLE_TIMEOUT` seconds and at most :data:`REACHABLE_GRACE`
    seconds past ``deadline`` (a :func:`time.monotonic` time: the end of
    ``--duration``); a signal of ``signals`` ends it at once (the error's
    exit code is then :data:`EXIT_INTERRUPTED` for SIGINT). Call from the
    main thread."""

    def list_one(aborter: RequestAborter, limit: float) -> object:
        lister = HTTPListerWatcher(cluster.api_client, resource, namespace, list_read_timeout=limit)
        return lister.abortable(aborter).list(ListOptions(limit=1))

    try:
        _bounded(cluster, signals, deadline, list_one)
    except ApiError as error:
        raise CommandError(f"the API server at {cluster.url} refused {resource}: {error}") from None


def _bounded(
    cluster: Cluster,
    signals: StopSignals | None,
    deadline: float | None,
    send: Callable[[RequestAborter, float], object],
) -> None:
    """Run ``send(aborter, limit)`` (one request, read timeout ``limit``),
    aborted after ``limit`` seconds (see :func:`check_reachable`) or at a
    signal; a transport failure becomes a :class:`CommandError`, an
    :class:`~informers.errors.ApiError` propagates."""
    limit = REACHABLE_TIMEOUT
    if deadline is not None:  # a little past it: a short --duration still gets an answer
        limit = min(limit, max(0.0, deadline - time.monotonic()) + REACHABLE_GRACE)
    aborter = RequestAborter()
    wake = threading.Event()  # the request ended, or a signal arrived
    if signals is not None:
        signals.also_set(wake)

    def abort_after_limit() -> None:
        wake.wait(limit)
        aborter.abort()  # harmless once the request is over

    watcher = threading.Thread(target=abort_after_limit, name="kube-informers-reachable")
    watcher.start()
    try:
        send(aborter, limit)
    except (urllib3.exceptions.HTTPError, OSError) as error:
        if signals is not None and signals.received:
            code = EXIT_INTERRUPTED if signals.interrupted else 1
            raise CommandError(
                f"stopped by {signals.reason} while waiting for the API server at {cluster.url}",
                code,
            ) from None
        # (urllib3's NewConnectionError, a refused connection, is a TimeoutError too.)
        timed_out = isinstance(error, urllib3.exceptions.TimeoutError | TimeoutError)
        if aborter.aborted or (
            timed_out and not isinstance(error, urllib3.exceptions.NewConnectionError)
        ):
            raise CommandError(
                f"the API server at {cluster.url} did not answer within {round(limit, 1):g} s"
            ) from None
        reason = getattr(error, "reason", None) or error
        raise CommandError(f"cannot reach the API server at {cluster.url}: {reason}") from None
    finally:
        wake.set()
        watcher.join()


def _pod(rng: random.Random, namespace: str, name: str, app: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
        "spec": {
            "nodeName": f"node-{rng.randrange(4)}",
            "containers": [{"name": "main", "image": f"example/{app}:1"}],
        },
    }


def _deployment(namespace: str, name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": f"example/{name}:1"}]},
            },
        },
    }


def seed_cluster(server: Any, rng: random.Random, objects: int) -> None:
    """Create the embedded namespaces and about ``objects`` pods and
    deployments in them (one deployment per five pods)."""
    for namespace in EMBEDDED_NAMESPACES[1:]:
        server.create(NAMESPACES, {"metadata": {"name": namespace}})
    for number in range(max(1, objects // 6)):
        namespace = rng.choice(EMBEDDED_NAMESPACES)
        server.create(DEPLOYMENTS, _deployment(namespace, f"app-{number}", rng.randrange(1, 4)))
    for number in range(objects - objects // 6):
        namespace = rng.choice(EMBEDDED_NAMESPACES)
        app = rng.choice(["web", "api", "worker"])
        server.create(PODS, _pod(rng, namespace, f"pod-{number}", app))


class Churn:
    """Writes to the embedded emulator on a background thread named
    ``kube-informers-churn``: creates, updates and deletes pods and
    deployments, ``rate`` writes a second, until :meth:`stop` (which joins
    the thread). :attr:`writes` counts what was written."""

    def __init__(self, server: Any, rng: random.Random, rate: float = 20.0) -> None:
        self._server = server
        self._rng = rng
        self._interval = 1.0 / rate
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._writes = 0  # guarded by _lock
        self._next = 0  # only the churn thread touches it
        self._thread = threading.Thread(target=self._main, name="kube-informers-churn", daemon=True)

    @property
    def writes(self) -> int:
        """Writes made so far."""
        with self._lock:
            return self._writes

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and join it; idempotent."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _main(self) -> None:
        try:
            while not self._stop.wait(self._interval):
                self._write_one()
                with self._lock:
                    self._writes += 1
        except Exception:
            log.exception("embedded churn stopped")

    def _write_one(self) -> None:
        from informers.testing.apiserver import ApiServerError

        rng = self._rng
        resource = PODS if rng.random() < 0.8 else DEPLOYMENTS
        live = self._server.list_objects(resource)
        roll = rng.random()
        self._next += 1
        namespace = rng.choice(EMBEDDED_NAMESPACES)
        try:
            if roll < 0.35 or not live:
                if resource is PODS:
                    obj = _pod(rng, namespace, f"churn-{self._next}", "web")
                else:
                    obj = _deployment(namespace, f"churn-{self._next}", 1)
                self._server.create(resource, obj)
            elif roll < 0.75:
                obj = rng.choice(live)
                labels = dict(obj["metadata"].get("labels") or {})
                labels["revision"] = str(rng.randrange(1000))
                obj["metadata"]["labels"] = labels
                self._server.update(resource, obj)
            else:
                obj = rng.choice(live)
                meta = obj["metadata"]
                self._server.delete(resource, meta["name"], meta.get("namespace"))
        except ApiServerError as error:  # a conflict with a concurrent write: skip it
            log.debug("embedded churn: %s", error)


# --- arguments shared by the subcommands ---


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number of seconds greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text}")
    return value


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig", help="the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)"
    )
    parser.add_argument("--context", help="the kubeconfig context (default: its current one)")
    parser.add_argument("--namespace", "-n", help="one namespace only (default: all)")
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="run against the embedded API server emulator, with generated churn",
    )
    parser.add_argument(
        "--objects",
        type=positive_int,
        default=60,
        help="with --embedded: objects created before starting (default 60)",
    )
    parser.add_argument("--seed", type=int, default=0, help="with --embedded: the churn's seed")
    parser.add_argument(
        "--duration",
        type=positive_float,
        help="stop after this many seconds (default: run until Ctrl-C)",
    )
    parser.add_argument(
        "--output", choices=("rich", "json"), default="rich", help="rich tables, or plain JSON"
    )
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="show the library's warnings (retries)"
    )
    add_logging_options(parser)


#: How to install what the SQL mirror needs.
MIRROR_EXTRA_HINT = "pip install 'kube-informers[mirror]'"


def safe_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages)."""
    import sqlalchemy as sa

    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return url if "@" not in url else "(the --db URL)"
