"""tracker.errors: one tree under InformersError, built-in kinds kept."""

from __future__ import annotations

import pytest

from informers.errors import ChannelEmptyError, ChannelFullError, InformersError
from tracker import errors


@pytest.mark.parametrize("name", errors.__all__)
def test_every_tracker_error_is_an_informers_error(name: str) -> None:
    cls = getattr(errors, name)
    assert issubclass(cls, errors.TrackerError)
    assert issubclass(cls, InformersError)


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (ChannelFullError, TimeoutError),
        (ChannelEmptyError, TimeoutError),
        (errors.DuplicateSubscriptionError, ValueError),
        (errors.ChannelRegistrationError, ValueError),
        (errors.UnknownResourceTypeError, LookupError),
        (errors.ResourceNotSyncedError, LookupError),
    ],
)
def test_errors_keep_their_builtin_kind(cls: type[Exception], builtin: type[Exception]) -> None:
    assert issubclass(cls, builtin)


def test_lookup_errors_print_plain_messages() -> None:
    assert str(errors.UnknownResourceTypeError("pods")) == "resource type 'pods' is not tracked"
    assert str(errors.ResourceNotSyncedError("pods")) == "resource type 'pods' has not synced yet"
    assert errors.ConversionError("pods", "ns/a", "ValueError").key == "ns/a"
