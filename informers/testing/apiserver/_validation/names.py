"""The name checks of k8s.io/apimachinery ``pkg/util/validation``: DNS-1123
labels and subdomains, DNS-1035 labels, qualified names (label and
annotation keys, finalizers), label values, config keys and path segments,
each returning the messages the real server reports (empty when valid).

Pure functions, their answers cached (names repeat: label keys, container
names); thread-safe.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "config_key",
    "dns1035_label",
    "dns1123_label",
    "dns1123_subdomain",
    "label_value",
    "path_segment",
    "port_name",
    "qualified_name",
]

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME = re.compile(_QNAME_FMT + r"\Z")
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT + r"\Z")
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', "
    "'_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL = re.compile(_LABEL_FMT + r"\Z")
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
    "'-', and must start and end with an alphanumeric character"
)
_SUBDOMAIN_FMT = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT + r"\Z")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035 = re.compile(_DNS1035_FMT + r"\Z")
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
    "with an alphabetic character, and end with an alphanumeric character"
)
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY = re.compile(_CONFIG_KEY_FMT + r"\Z")
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's ``RegexError``: the message, examples, the regex."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(limit: int) -> str:
    return f"must be no more than {limit} characters"


@lru_cache(maxsize=8192)
def dns1123_label(value: str) -> tuple[str, ...]:
    """``IsDNS1123Label``."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _LABEL.match(value):
        if _SUBDOMAIN.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def dns1123_subdomain(value: str) -> tuple[str, ...]:
    """``IsDNS1123Subdomain``."""
    errs = []
    if len(value) > 253:
        errs.append(_max_len(253))
    if not _SUBDOMAIN.match(value):
        errs.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def dns1035_label(value: str) -> tuple[str, ...]:
    """``IsDNS1035Label`` (Service names)."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1035.match(value):
        errs.append(_regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def qualified_name(value: str) -> tuple[str, ...]:
    """``IsQualifiedName``: an optional DNS subdomain prefix and ``/``, then a
    name of at most 63 characters (label keys, annotation keys, finalizers)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain(prefix))
    else:
        return (
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _QNAME.match(name):
        errs.append(
            "name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
        )
    return tuple(errs)


@lru_cache(maxsize=8192)
def label_value(value: str) -> tuple[str, ...]:
    """``IsValidLabelValue``."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _LABEL_VALUE.match(value):
        errs.append(
            _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return tuple(errs)


@lru_cache(maxsize=8192)
def config_key(value: str) -> tuple[str, ...]:
    """``IsConfigMapKey`` (ConfigMap and Secret data keys)."""
    errs = []
    if len(value) > 253:
        errs.append(_max_len(253))
    if not _CONFIG_KEY.match(value):
        errs.append(
            _regex_error(_CONFIG_KEY_MSG, _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name")
        )
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return tuple(errs)


@lru_cache(maxsize=8192)
def path_segment(value: str) -> tuple[str, ...]:
    """``IsValidPathSegmentName`` (RBAC object names)."""
    if value in (".", ".."):
        return (f"may not be '{value}'",)
    return tuple(f"may not contain '{c}'" for c in ("/", "%") if c in value)


@lru_cache(maxsize=8192)
def port_name(value: str) -> tuple[str, ...]:
    """``IsValidPortName`` (an IANA service name: container and Service
    port names, named target ports)."""
    errs = []
    if len(value) > 15:
        errs.append("must be no more than 15 characters")
    if not re.fullmatch("[-a-z0-9]+", value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return tuple(errs)
