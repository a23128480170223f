"""Who may talk to the emulator: bearer-token authentication, an optional
authorizer, and the check that it listens on loopback only.

Authentication follows a real API server started with ``--anonymous-auth=false``
and a static token file: every request, ``/version``, discovery and
``/healthz`` included, needs ``Authorization: Bearer <token>`` naming a known
token, or it is answered ``401 Unauthorized``. An authenticated user may then
read discovery, version, health and OpenAPI (what the default
``system:discovery`` and ``system:public-info-viewer`` roles grant every
authenticated user); a resource request is put to the authorizer, if any, as
an :class:`Access` (the attributes the real server's RBAC sees, parsed from the
URL the same way), and a refusal is answered ``403 Forbidden`` with the real
server's message.

Tokens are compared in constant time and never logged, repr'd or put in an
error message. Thread-safe: :class:`Security` is immutable after construction;
the authorizer is user code, called from connection threads without any lock
held.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._tls import SecurityConfigError

__all__ = [
    "Access",
    "Authorizer",
    "Security",
    "forbidden",
    "is_loopback_address",
    "request_access",
    "unauthorized",
    "warn_if_exposed",
]

log = logging.getLogger("informers.testing.apiserver")


@dataclass(frozen=True)
class Access:
    """One resource request, as an authorizer sees it (the real server's
    ``authorizer.Attributes``): ``user`` (the token's user name), ``verb``
    (``get``, ``list``, ``watch``, ``create``, ``update``, ``patch``,
    ``delete`` or ``deletecollection``), ``group`` (``""`` for core),
    ``resource`` (the plural), ``subresource`` (``status``, ``scale`` or
    ``""``), ``namespace`` (``""`` at the cluster scope; a Namespace's own
    name for ``/api/v1/namespaces/<name>``) and ``name`` (``""`` for a
    collection)."""

    user: str
    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""


#: An authorizer: True allows the request, False answers it 403 Forbidden.
#: ``authorizer(access) -> bool``: whether a resource request is allowed (a 403 if not).
Authorizer = Callable[[Access], bool]

#: Path segments after ``namespaces/<name>`` that are a Namespace's own subresources.
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


def request_access(
    user: str, method: str, path: str, query: Mapping[str, list[str]]
) -> Access | None:
    """The :class:`Access` of a resource request, worked out from the URL alone
    as the real server's request-info resolver does (so an unknown resource is
    still named); None for a non-resource path (``/version``, ``/api``,
    ``/apis``, ``/apis/<group>``, ``/healthz``, ``/openapi/...``)."""
    parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/") if p]
    if len(parts) >= 3 and parts[0] == "api":
        group, rest = "", parts[2:]
    elif len(parts) >= 4 and parts[0] == "apis":
        group, rest = parts[1], parts[3:]
    else:
        return None
    watch_prefix = bool(rest) and rest[0] == "watch"
    if watch_prefix:
        rest = rest[1:]
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    if not rest:
        return None
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    verb = _verb(method, name, watch_prefix, query)
    if verb in ("list", "watch") and not name:
        name = _single_name(query)
    return Access(user, verb, group, resource, subresource, namespace, name)


def _verb(method: str, name: str, watch_prefix: bool, query: Mapping[str, list[str]]) -> str:
    method = method.upper()
    if method in ("GET", "HEAD"):
        watch = (query.get("watch") or [""])[-1].lower() in ("true", "1")
        if watch_prefix or watch:
            return "watch"
        return "get" if name else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return method.lower()


def _single_name(query: Mapping[str, list[str]]) -> str:
    """The name a list or watch is narrowed to by ``fieldSelector=metadata.name=X``."""
    selector = (query.get("fieldSelector") or [""])[-1]
    for requirement in selector.split(","):
        for operator in ("==", "="):
            field, sep, value = requirement.partition(operator)
            if sep and field.strip() == "metadata.name" and "!" not in field:
                return value.strip()
    return ""


def unauthorized() -> StatusError:
    """The 401 a real server answers a request without valid credentials."""
    return StatusError(401, "Unauthorized", "Unauthorized")


def forbidden(access: Access) -> StatusError:
    """The 403 a real server answers ``access`` with when RBAC refuses it,
    message included (``pods is forbidden: User "bob" cannot list resource
    "pods" in API group "" in the namespace "default"``)."""
    resource = access.resource
    if access.subresource:
        resource = f"{resource}/{access.subresource}"
    where = f'in the namespace "{access.namespace}"' if access.namespace else "at the cluster scope"
    reason = (
        f'User "{access.user}" cannot {access.verb} resource "{resource}" '
        f'in API group "{access.group}" {where}'
    )
    qualified = f"{access.resource}.{access.group}" if access.group else access.resource
    subject = f'{qualified} "{access.name}"' if access.name else qualified
    details: dict[str, str] = {}
    if access.name:
        details["name"] = access.name
    if access.group:
        details["group"] = access.group
    details["kind"] = access.resource
    return StatusError(403, "Forbidden", f"{subject} is forbidden: {reason}", details)


class Security:
    """Bearer tokens (token → user name) and an optional authorizer.

    Immutable after construction; thread-safe. Its repr never shows a token.
    """

    def __init__(self, tokens: Mapping[str, str], authorizer: Authorizer | None = None) -> None:
        checked: list[tuple[bytes, str]] = []
        for token, user in tokens.items():
            if not isinstance(token, str) or not token or token != token.strip():
                raise SecurityConfigError(
                    "every token must be a non-empty string without surrounding whitespace"
                )
            if any(c.isspace() for c in token) or not token.isprintable() or not token.isascii():
                raise SecurityConfigError("a token must be printable ASCII without spaces")
            if not isinstance(user, str) or not user:
                raise SecurityConfigError("every token must map to a non-empty user name")
            checked.append((token.encode(), user))
        if not checked:
            raise SecurityConfigError(
                "tokens must name at least one token (None turns authentication off)"
            )
        self._tokens = tuple(checked)
        self._first = next(iter(tokens))
        self.authorizer = authorizer

    def __repr__(self) -> str:
        return f"Security(<{len(self._tokens)} tokens>, authorizer={self.authorizer!r})"

    @property
    def default_token(self) -> str:
        """The first configured token (what :meth:`ApiServer.api_client` sends)."""
        return self._first

    def authenticate(self, header: str | None) -> str | None:
        """The user a ``Authorization`` header value authenticates, or None
        (no header, not ``Bearer``, unknown token). Every known token is
        compared, in constant time, whatever matches."""
        if not header:
            return None
        scheme, _, credential = header.strip().partition(" ")
        credential = credential.strip()
        if scheme.lower() != "bearer" or not credential:
            return None
        sent = credential.encode("utf-8", "surrogateescape")
        found: str | None = None
        for token, user in self._tokens:
            if hmac.compare_digest(token, sent) and found is None:
                found = user
        return found

    def authorize(self, access: Access) -> None:
        """Raise the 403 :class:`StatusError` when the authorizer refuses
        ``access``; no authorizer allows everything."""
        if self.authorizer is not None and not self.authorizer(access):
            log.debug(
                "forbidden: user %s cannot %s %s in namespace %r",
                access.user,
                access.verb,
                access.resource,
                access.namespace,
            )
            raise forbidden(access)


def is_loopback_address(host: str) -> bool:
    """Whether ``host`` (an address the emulator binds, or ``localhost``) is
    reachable from this machine only: ``127.0.0.0/8``, ``::1``, an IPv4-mapped
    loopback address or ``localhost``. ``""`` and ``0.0.0.0`` (every
    interface), other addresses and other host names are not."""
    if host.lower().rstrip(".") in ("localhost", "localhost.localdomain"):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def warn_if_exposed(host: str, *, authenticated: bool) -> bool:
    """Log one WARNING when ``host`` is not a loopback address (see
    :func:`is_loopback_address`); returns whether it is loopback."""
    if is_loopback_address(host):
        return True
    log.warning(
        "API server emulator bound to %s, which is not a loopback address: other machines "
        "can reach it%s",
        host or "every interface",
        "" if authenticated else ", and it has no authentication (pass tokens=...)",
    )
    return False
