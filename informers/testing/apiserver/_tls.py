"""TLS for the emulator: the certificate and key it serves, the CA its
clients trust, and a self-signed pair made with the ``openssl`` command.

:class:`TLSConfig` names PEM files; :meth:`TLSConfig.server_context` loads
them into a server-side :class:`ssl.SSLContext` (TLS 1.2 or later, ALPN
``http/1.1``) and :meth:`TLSConfig.ca_pem` reads the CA certificate clients
should trust (the ``certificate-authority-data`` of a kubeconfig). Both read
the files when called, so :class:`~informers.testing.ApiServer` calls them once,
at construction; the files may be removed afterwards.

:func:`generate_self_signed` makes a throw-away CA and a server certificate
signed by it (for ``127.0.0.1`` and ``localhost`` by default) with the
``openssl`` binary. The ``cryptography`` package is deliberately not used: it
is not a run-time dependency of kube-informers (neither ``kubernetes`` nor
``urllib3`` pulls it in; ``trustme``, which needs it, is for tests only).
Without ``openssl`` on ``PATH``, :class:`SecurityConfigError` says so in one
line; pass your own files instead.

Everything here is thread-safe (no shared state); the subprocesses block the
caller for their run (tens of milliseconds).
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import shutil
import ssl
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from informers.errors import InformersError

__all__ = ["TLSConfig", "SecurityConfigError", "generate_self_signed"]

#: Seconds one openssl invocation may take.
_OPENSSL_TIMEOUT = 60.0


class SecurityConfigError(InformersError, ValueError):
    """The emulator's TLS or authentication settings cannot be used: a file
    is missing or is not a PEM certificate/key, ``openssl`` is missing or
    failed, or a token is malformed. The message names the file or setting,
    never a key or token."""


@dataclass(frozen=True)
class TLSConfig:
    """The PEM files the emulator serves HTTPS with.

    ``cert_file`` holds the server certificate (optionally followed by its
    chain), ``key_file`` its private key (may be the same file).
    ``ca_file`` is the CA certificate clients should trust; None means the
    server certificate is its own CA (self-signed), so ``cert_file`` is used.
    Immutable, so thread-safe.
    """

    cert_file: str | os.PathLike[str]
    key_file: str | os.PathLike[str]
    ca_file: str | os.PathLike[str] | None = None

    @property
    def trust_file(self) -> Path:
        """The file a client verifies the server against (``ca_file``, else
        ``cert_file``)."""
        return Path(self.ca_file if self.ca_file is not None else self.cert_file)

    def server_context(self) -> ssl.SSLContext:
        """A server-side context holding the certificate and key (TLS 1.2+,
        ALPN ``http/1.1``); :class:`SecurityConfigError` when they cannot be loaded."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["http/1.1"])
        try:
            context.load_cert_chain(os.fspath(self.cert_file), os.fspath(self.key_file))
        except FileNotFoundError as exc:
            raise SecurityConfigError(f"TLS file not found: {exc.filename}") from None
        except (ssl.SSLError, OSError) as exc:
            # The SSL error text names the problem, never the key material.
            raise SecurityConfigError(
                f"cannot load the TLS certificate {os.fspath(self.cert_file)!r} and key "
                f"{os.fspath(self.key_file)!r}: {exc}"
            ) from None
        return context

    def ca_pem(self) -> bytes:
        """The PEM bytes of :attr:`trust_file`; :class:`SecurityConfigError` when it
        is unreadable or holds no certificate."""
        path = self.trust_file
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SecurityConfigError(
                f"cannot read the CA certificate {str(path)!r}: {exc}"
            ) from None
        if b"-----BEGIN CERTIFICATE-----" not in data:
            raise SecurityConfigError(f"{str(path)!r} holds no PEM certificate")
        # Only the certificates: a combined cert+key file must not leak its key.
        return _certificates_only(data)


def _certificates_only(pem: bytes) -> bytes:
    out: list[bytes] = []
    inside = False
    for line in pem.splitlines(keepends=True):
        if line.startswith(b"-----BEGIN CERTIFICATE-----"):
            inside = True
        if inside:
            out.append(line)
        if line.startswith(b"-----END CERTIFICATE-----"):
            inside = False
            if not line.endswith(b"\n"):
                out.append(b"\n")
    return b"".join(out)


def _san(host: str) -> str:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return f"DNS:{host}"
    return f"IP:{host}"


_CONFIG = """\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = kube-informers emulator CA
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = {san}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


def generate_self_signed(
    directory: str | os.PathLike[str],
    *,
    hosts: Sequence[str] = ("127.0.0.1", "localhost"),
    days: int = 30,
    openssl: str | None = None,
) -> TLSConfig:
    """Make a CA and a server certificate for ``hosts`` (IP addresses or DNS
    names) in ``directory`` with the ``openssl`` binary (``openssl`` names
    it; default: the one on ``PATH``), and return their :class:`TLSConfig`
    (``ca.crt``, ``server.crt``, ``server.key``; the CA's key is deleted once
    it has signed). Blocks while openssl runs. :class:`SecurityConfigError` when
    openssl is missing or fails."""
    binary = openssl or shutil.which("openssl")
    if binary is None:
        raise SecurityConfigError(
            "the openssl command is needed to make a self-signed certificate and is not on "
            "PATH; install openssl or pass your own certificate and key files"
        )
    if not hosts:
        raise SecurityConfigError("a certificate needs at least one host name or address")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    config = out / "openssl.cnf"
    config.write_text(_CONFIG.format(san=", ".join(_san(h) for h in hosts)), encoding="utf-8")
    ca_key, ca_cert = out / "ca.key", out / "ca.crt"
    key, csr, cert = out / "server.key", out / "server.csr", out / "server.crt"
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    make_ca = ["req", "-x509", "-new", "-config", str(config), "-extensions", "ca"]
    make_ca += [*curve, "-keyout", str(ca_key), "-out", str(ca_cert), "-days", str(days)]
    make_request = ["req", "-new", "-config", str(config), *curve]
    make_request += ["-subj", "/CN=kube-informers emulator", "-keyout", str(key), "-out", str(csr)]
    sign = ["x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key)]
    sign += ["-set_serial", "0x" + secrets.token_hex(16), "-days", str(days)]
    sign += ["-extfile", str(config), "-extensions", "server", "-out", str(cert)]
    try:
        for command in (make_ca, make_request, sign):
            _run(binary, *command)
    finally:
        for leftover in (ca_key, csr, config):
            leftover.unlink(missing_ok=True)
    key.chmod(0o600)
    return TLSConfig(cert_file=cert, key_file=key, ca_file=ca_cert)


def _run(binary: str, *args: str) -> None:
    try:
        result = subprocess.run(
            [binary, *args],
            capture_output=True,
            text=True,
            timeout=_OPENSSL_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SecurityConfigError(f"openssl {args[0]} could not run: {exc}") from None
    if result.returncode != 0:
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        detail = lines[-1] if lines else f"exit status {result.returncode}"
        raise SecurityConfigError(f"openssl {args[0]} failed: {detail}")
