"""A throwaway PostgreSQL server for tests and benchmarks.

:class:`PostgresServer` initialises a cluster with the server binaries of the
machine (Debian's ``postgresql`` package puts them under
``/usr/lib/postgresql/<major>/bin``) in a temporary directory, starts it on a
free loopback port with its unix socket inside that directory, and removes
everything when stopped. PostgreSQL refuses to run as root: when this process
is root, every server command runs as the unprivileged ``postgres`` user the
package creates (through ``runuser -u postgres --``) and the directory is
handed to that user.

The server favours speed over durability (``fsync``, ``synchronous_commit``
and ``full_page_writes`` are off): it is for tests, never for data.

Not thread-safe: start, stop and restart it from one thread (the test's).
The server runs as a separate process, so it starts no thread here.
"""

from __future__ import annotations

import glob
import logging
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

__all__ = ["PostgresServer", "PostgresServerError", "find_postgres_bindir"]

log = logging.getLogger(__name__)

#: Where Debian's packages install the server binaries, one directory per major.
DEBIAN_GLOB = "/usr/lib/postgresql/*/bin"

_START_TIMEOUT = 60


class PostgresServerError(RuntimeError):
    """A server command failed; the message carries its output and the log's tail."""


def find_postgres_bindir() -> Path | None:
    """The ``bin`` directory of the newest installed server that has
    ``initdb`` and ``pg_ctl`` (Debian layout first, then ``PATH``), or ``None``."""

    def major(path: str) -> int:
        version = Path(path).parent.name
        return int(version) if version.isdigit() else 0

    for candidate in sorted(glob.glob(DEBIAN_GLOB), key=major, reverse=True):
        if (Path(candidate) / "initdb").is_file() and (Path(candidate) / "pg_ctl").is_file():
            return Path(candidate)
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """One PostgreSQL cluster in a temporary directory, on ``127.0.0.1``.

    :param bindir: the server binaries (default: :func:`find_postgres_bindir`).
    :param run_as: the user to run the server as when this process is root.

    ``start()`` initialises the cluster the first time and starts the server
    (``pg_ctl -w`` returns once it accepts connections); ``stop()`` stops it
    and keeps the data, so ``start()`` again serves the same databases on the
    same port (a restart, as the fault tests need); ``cleanup()`` (and leaving
    the ``with`` block) stops it and removes the directory.
    """

    def __init__(self, bindir: Path | str | None = None, *, run_as: str = "postgres") -> None:
        found = Path(bindir) if bindir is not None else find_postgres_bindir()
        if found is None:
            raise PostgresServerError(
                "no PostgreSQL server binaries found (apt-get install postgresql)"
            )
        self.bindir = found
        self.port = _free_port()
        self.user = "postgres"  # the superuser initdb creates
        self._run_as = run_as if os.geteuid() == 0 else None
        self._dir: Path | None = None
        self._running = False

    # ------------------------------------------------------------- helpers

    @property
    def directory(self) -> Path:
        """The temporary directory (``data/``, ``socket/``, ``server.log``)."""
        if self._dir is None:
            raise PostgresServerError("the server was never started")
        return self._dir

    @property
    def running(self) -> bool:
        return self._running

    def _command(self, *args: str) -> list[str]:
        if self._run_as is None:
            return list(args)
        return ["runuser", "-u", self._run_as, "--", *args]

    def _run(self, *args: str) -> None:
        command = self._command(*args)
        result = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=_START_TIMEOUT * 2,
            check=False,
        )
        if result.returncode != 0:
            raise PostgresServerError(
                f"{' '.join(args[:2])} failed ({result.returncode}): {result.stdout.strip()}"
                f"{self._log_tail()}"
            )

    def _log_tail(self) -> str:
        if self._dir is None:
            return ""
        log_file = self._dir / "server.log"
        if not log_file.exists():
            return ""
        lines = log_file.read_text(errors="replace").splitlines()[-20:]
        return "\nserver log:\n" + "\n".join(lines)

    def _initdb(self) -> Path:
        directory = Path(tempfile.mkdtemp(prefix="kube-informers-pg-"))
        (directory / "socket").mkdir()
        if self._run_as is not None:
            account = pwd.getpwnam(self._run_as)
            for path in (directory, directory / "socket"):
                os.chown(path, account.pw_uid, account.pw_gid)
        self._dir = directory
        data = directory / "data"
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            self.user,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        settings = (
            "\n# kube-informers test server\n"
            "listen_addresses = '127.0.0.1'\n"
            f"port = {self.port}\n"
            f"unix_socket_directories = '{directory / 'socket'}'\n"
            "fsync = off\n"
            "synchronous_commit = off\n"
            "full_page_writes = off\n"
            "max_connections = 100\n"
        )
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(settings)
        return directory

    # ----------------------------------------------------------- lifecycle

    def start(self) -> PostgresServer:
        """Start the server (initialising the cluster the first time) and
        wait until it accepts connections. Idempotent."""
        if self._running:
            return self
        directory = self._dir or self._initdb()
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(directory / "data"),
            "-l",
            str(directory / "server.log"),
            "-w",
            "-t",
            str(_START_TIMEOUT),
            "start",
        )
        self._running = True
        log.info("PostgreSQL test server on 127.0.0.1:%d (%s)", self.port, directory)
        return self

    def stop(self) -> None:
        """Stop the server (fast shutdown: sessions are disconnected), keeping
        its data. Idempotent."""
        if not self._running or self._dir is None:
            return
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self._dir / "data"), "-m", "fast", "-w", "stop"
        )
        self._running = False
        log.info("PostgreSQL test server on port %d stopped", self.port)

    def cleanup(self) -> None:
        """Stop the server and remove its directory."""
        try:
            self.stop()
        finally:
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cleanup()

    # ------------------------------------------------------------ databases

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL of ``database`` over TCP, with the psycopg 3 driver."""
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    def _admin(self, statement: str, database: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=self.user, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(sql.SQL(statement).format(sql.Identifier(database)))

    def create_database(self, name: str) -> str:
        """Create database ``name``; returns its URL (see :meth:`url`)."""
        self._admin("CREATE DATABASE {}", name)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop database ``name``, disconnecting its sessions first."""
        self._admin("DROP DATABASE IF EXISTS {} WITH (FORCE)", name)
