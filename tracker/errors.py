"""The errors of the ``tracker`` package.

They hang under :class:`informers.errors.InformersError`, so ``except
InformersError`` catches everything kube-informers raises on purpose.
Errors that are also a built-in kind derive from that kind too::

    InformersError
    └── TrackerError
        ├── DuplicateSubscriptionError (ValueError)   a bus subscription of that name exists
        ├── ChannelRegistrationError   (ValueError)   a channel registered twice / not registered
        ├── ConversionError                           an object does not convert to the
        │                                             resource tracker's type
        ├── UnknownResourceTypeError   (LookupError)  a resource type the tracker does not expect
        ├── ResourceNotSyncedError     (LookupError)  an expected resource type not synced yet
        ├── SyncAPIError                              the syncapi contract (tracker.syncapi)
        │   ├── ObjectKeyParseError    (ValueError)   a string is not a namespace/name key
        │   ├── SyncerConfigError      (ValueError)   a sync controller that cannot start (bad
        │                                             name, no reconcile function, no sources)
        │   └── DiffError                             diff() failed: no partial result
        │       ├── InvalidListItemError (TypeError)  an item of the wrong type or with no UID
        │       ├── IncompleteListError               the list has a continue token
        │       └── ComparisonError                   matches() raised for a live object
        └── MirrorError                               the SQL mirror (tracker.mirror)
            ├── MirrorConfigError      (ValueError)   a bad table, column or path declaration
            ├── InvalidObjectError     (ValueError)   an object that cannot be a row (no uid,
            │                                         no name, another kind)
            ├── SchemaMismatchError                   the existing table differs from the
            │                                         declaration in a way that cannot be
            │                                         migrated additively (names the difference)
            └── MirrorDatabaseError                   a database operation failed (rolled back)
                └── DatabaseUnavailableError          the database cannot be reached now:
                                                      retry later (``retryable`` is true)

A component started twice raises :class:`informers.errors.InformerStateError`
(a :class:`RuntimeError`), like every other component of the library.
"""

from __future__ import annotations

from informers.errors import InformersError

__all__ = [
    "ChannelRegistrationError",
    "ComparisonError",
    "ConversionError",
    "DatabaseUnavailableError",
    "DiffError",
    "DuplicateSubscriptionError",
    "IncompleteListError",
    "InvalidListItemError",
    "InvalidObjectError",
    "MirrorConfigError",
    "MirrorDatabaseError",
    "MirrorError",
    "ObjectKeyParseError",
    "ResourceNotSyncedError",
    "SchemaMismatchError",
    "SyncAPIError",
    "SyncerConfigError",
    "TrackerError",
    "UnknownResourceTypeError",
]


class TrackerError(InformersError):
    """Base class of the errors raised by the ``tracker`` package."""


class DuplicateSubscriptionError(TrackerError, ValueError):
    """The event bus already has a live subscription of that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"a subscription named {name!r} exists already")
        self.name = name


class ChannelRegistrationError(TrackerError, ValueError):
    """A channel was registered twice, or unregistered without being registered."""


class ConversionError(TrackerError):
    """An object could not be converted to the tracker's type.

    The message names the kind, the key and the type of the original error,
    never the object's content (it may be a Secret). ``__cause__`` holds the
    original error, whose own message may quote content: log it with care."""

    def __init__(self, kind: str, key: str, reason: str) -> None:
        super().__init__(f"cannot convert {kind} {key!r}: {reason}")
        self.kind = kind
        self.key = key


class UnknownResourceTypeError(TrackerError, LookupError):
    """The resource type name is not one the tracker was told to expect."""

    def __init__(self, resource_type_name: str) -> None:
        super().__init__(f"resource type {resource_type_name!r} is not tracked")
        self.resource_type_name = resource_type_name

    def __str__(self) -> str:  # LookupError would quote the whole message
        return str(self.args[0])


class ResourceNotSyncedError(TrackerError, LookupError):
    """The resource type is expected but has not reported its sync yet."""

    def __init__(self, resource_type_name: str) -> None:
        super().__init__(f"resource type {resource_type_name!r} has not synced yet")
        self.resource_type_name = resource_type_name

    def __str__(self) -> str:  # LookupError would quote the whole message
        return str(self.args[0])


# --------------------------------------------------------------------- syncapi


class SyncAPIError(TrackerError):
    """Base class of the errors of :mod:`tracker.syncapi`."""


class ObjectKeyParseError(SyncAPIError, ValueError):
    """A string is not an object key (``namespace/name``, ``/name`` or ``name``)."""


class SyncerConfigError(SyncAPIError, ValueError):
    """A sync controller cannot start: its name is empty or has whitespace,
    it has no reconcile function, or its syncer has no sources."""


class DiffError(SyncAPIError):
    """:func:`tracker.syncapi.diff` failed. A diff that raises returns nothing:
    there is never a partial result to act on."""


class InvalidListItemError(DiffError, TypeError):
    """A list item is not of the expected type, has no ``metadata.uid``, or has
    no usable key. ``index`` is its position in the list; ``key`` its
    ``namespace/name`` when it has one (``""`` otherwise)."""

    def __init__(self, index: int, key: str, reason: str) -> None:
        where = f"list item {index}" + (f" ({key})" if key else "")
        super().__init__(f"{where}: {reason}")
        self.index = index
        self.key = key


class IncompleteListError(DiffError):
    """The list carries a continue token: it is one page of a longer list, and
    a diff of part of a kind would report every row of the rest as an orphan."""

    def __init__(self, continue_token: str) -> None:
        super().__init__("the list is incomplete (it has a continue token); diff needs a full list")
        self.continue_token = continue_token


class ComparisonError(DiffError):
    """``matches(obj, row)`` raised for the object of key ``key``; ``__cause__``
    holds the original error."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"comparing {key} with its row failed: {reason}")
        self.key = key


# ---------------------------------------------------------------------- mirror


class MirrorError(TrackerError):
    """Base class of the errors of :mod:`tracker.mirror`."""


class MirrorConfigError(MirrorError, ValueError):
    """A declaration the mirror refuses: a table or column name that is not a
    safe identifier, a malformed path, an unknown column type, a clash with a
    built-in column."""


class InvalidObjectError(MirrorError, ValueError):
    """The object handed to a mirror's ``sync`` cannot be a row: it is not a
    mapping, has no ``metadata.uid`` or ``metadata.name``, or is of another
    kind. The message names the key when there is one, never the content."""


class SchemaMismatchError(MirrorError):
    """The table found in the database differs from the declaration in a way
    the mirror does not migrate (it adds columns; it drops one only when told
    to, and never rewrites data). ``differences`` lists each difference in
    words."""

    def __init__(self, table: str, differences: list[str]) -> None:
        detail = "; ".join(differences)
        super().__init__(
            f"table {table!r} does not match its declaration: {detail} "
            "(the mirror adds columns by itself; change the declaration back, or migrate "
            "or drop the table yourself)"
        )
        self.table = table
        self.differences = list(differences)


class MirrorDatabaseError(MirrorError):
    """A database operation failed; its transaction was rolled back, so nothing
    of it was written. ``__cause__`` holds the driver's error. ``retryable``
    says whether trying again later may succeed; ``operation`` is what was
    done, ``reason`` why it failed."""

    retryable: bool = False

    def __init__(self, operation: str, reason: str) -> None:
        super().__init__(f"{operation} failed: {reason}")
        self.operation = operation
        self.reason = reason


class DatabaseUnavailableError(MirrorDatabaseError):
    """The database could not be reached (connection refused or lost, server
    shutting down, SQLite busy): retry later. The engine reconnects by itself
    once the server is back."""

    retryable = True
