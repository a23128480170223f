"""The errors of the ``tracker`` package.

They hang under :class:`informers.errors.InformersError`, so ``except
InformersError`` still catches everything kube-informers raises on purpose.
Errors that are also a built-in kind derive from that kind too::

    InformersError
    └── TrackerError
        ├── ChannelClosedError                        put on a closed channel; get on a
        │                                             closed and drained one
        ├── ChannelTimeoutError        (TimeoutError)
        │   ├── ChannelFullError                      put timed out on a full channel
        │   └── ChannelEmptyError                     get timed out on an empty channel
        ├── DuplicateSubscriptionError (ValueError)   a bus subscription of that name exists
        ├── ChannelRegistrationError   (ValueError)   a channel registered twice / not registered
        ├── ConversionError                           an object does not convert to the
        │                                             resource tracker's type
        ├── UnknownResourceTypeError   (LookupError)  a resource type the tracker does not expect
        └── ResourceNotSyncedError     (LookupError)  an expected resource type not synced yet

A component started twice raises :class:`informers.errors.InformerStateError`
(a :class:`RuntimeError`), like every other component of the library.
"""

from __future__ import annotations

from informers.errors import InformersError

__all__ = [
    "ChannelClosedError",
    "ChannelEmptyError",
    "ChannelFullError",
    "ChannelRegistrationError",
    "ChannelTimeoutError",
    "ConversionError",
    "DuplicateSubscriptionError",
    "ResourceNotSyncedError",
    "TrackerError",
    "UnknownResourceTypeError",
]


class TrackerError(InformersError):
    """Base class of the errors raised by the ``tracker`` package."""


class ChannelClosedError(TrackerError):
    """The channel is closed: nothing may be put into it, and once its queued
    items are drained nothing more will come out of it."""


class ChannelTimeoutError(TrackerError, TimeoutError):
    """A channel operation did not complete before its timeout."""


class ChannelFullError(ChannelTimeoutError):
    """``put`` timed out because the bounded channel stayed full."""


class ChannelEmptyError(ChannelTimeoutError):
    """``get`` timed out because the channel stayed empty."""


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
