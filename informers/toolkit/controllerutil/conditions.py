"""Status conditions (``metav1.Condition``) on a conditions list, with
apimachinery's ``meta.SetStatusCondition`` rules.

A condition is a dict: ``type`` (unique in the list), ``status``
(``"True"``, ``"False"`` or ``"Unknown"``), ``reason`` (CamelCase),
``message``, ``observedGeneration`` (the ``metadata.generation`` the
condition was computed from) and ``lastTransitionTime`` (RFC 3339, seconds,
UTC: ``"2024-05-01T12:00:00Z"``, as the API serialises ``metav1.Time``): when
``status`` last changed.

:func:`set_status_condition` keeps that meaning:

* a condition of a new type is appended, with ``lastTransitionTime`` now
  unless it carries one;
* for an existing type, ``lastTransitionTime`` changes only when ``status``
  does (to the new condition's time if it has one, else now); ``reason``,
  ``message`` and ``observedGeneration`` are replaced by the new
  condition's (a missing ``observedGeneration`` is 0, i.e. absent);
* an existing condition without ``lastTransitionTime`` (written by hand) gets
  one (apimachinery leaves it empty; the API requires it).

So setting the same condition again changes nothing and returns ``False``:
a reconcile can set its conditions every time and write the status only
when something changed. Work on the object's own list, creating it when
needed::

    conditions = obj.setdefault("status", {}).setdefault("conditions", [])
    if set_status_condition(conditions, {"type": "Ready", "status": "True",
                                         "reason": "Synced", "message": "",
                                         "observedGeneration": obj["metadata"]["generation"]}):
        update_status(obj)

The functions that change the list change it **in place**: copy an object
read from a cache first. Not thread-safe for one list: the caller owns it.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableSequence, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from informers.errors import InvalidConditionError
from informers.toolkit.leaderelection.record import format_micro_time

__all__ = [
    "CONDITION_STATUSES",
    "find_status_condition",
    "format_time",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "remove_status_condition",
    "set_status_condition",
]

#: The statuses a condition may have.
CONDITION_STATUSES = frozenset({"True", "False", "Unknown"})

#: The fields set_status_condition copies from the new condition (besides
#: status and lastTransitionTime, which follow their own rule).
_REPLACED = ("reason", "message", "observedGeneration")


def format_time(when: datetime) -> str:
    """``when`` as a ``metav1.Time`` string: RFC 3339 in UTC, whole seconds
    (truncated), e.g. ``"2024-05-01T12:00:00Z"``. A naive datetime is UTC."""
    return format_micro_time(when)[:19] + "Z"  # drop ".ffffffZ"


def _now_string(now: datetime | str | None) -> str:
    if isinstance(now, str):
        return now
    return format_time(now if now is not None else datetime.now(UTC))


def _validate(condition: Mapping[str, Any]) -> None:
    ctype = condition.get("type")
    if not isinstance(ctype, str) or not ctype:
        raise InvalidConditionError(f"a condition needs a non-empty string type, not {ctype!r}")
    if condition.get("status") not in CONDITION_STATUSES:
        raise InvalidConditionError(
            f"condition {ctype!r}: status must be True, False or Unknown, "
            f"not {condition.get('status')!r}"
        )


def _generation(condition: Mapping[str, Any]) -> Any:
    """The observedGeneration, with absent and 0 the same (Go's omitempty)."""
    return condition.get("observedGeneration") or None


def find_status_condition(
    conditions: Sequence[Mapping[str, Any]] | None, condition_type: str
) -> Mapping[str, Any] | None:
    """The condition of ``condition_type`` in ``conditions`` (the list's own
    dict, not a copy), or ``None``."""
    for condition in conditions or ():
        if isinstance(condition, Mapping) and condition.get("type") == condition_type:
            return condition
    return None


def set_status_condition(
    conditions: MutableSequence[dict[str, Any]],
    condition: Mapping[str, Any],
    *,
    now: datetime | str | None = None,
) -> bool:
    """Set ``condition`` in ``conditions`` by the rules of the module
    documentation; returns whether the list changed. ``now`` (a datetime, or
    an RFC 3339 string) is the transition time when one is needed; default
    the current time. The new condition is copied, never kept.

    Raises :class:`~informers.errors.InvalidConditionError` (and changes
    nothing) when ``condition`` has no type or an invalid status.
    """
    _validate(condition)
    existing = find_status_condition(conditions, condition["type"])
    if existing is None:
        new = dict(condition)
        if not new.get("lastTransitionTime"):
            new["lastTransitionTime"] = _now_string(now)
        if _generation(new) is None:
            new.pop("observedGeneration", None)
        conditions.append(new)
        return True
    existing = cast("dict[str, Any]", existing)  # an element of the list we were given
    changed = False
    if existing.get("status") != condition["status"]:
        existing["status"] = condition["status"]
        existing["lastTransitionTime"] = condition.get("lastTransitionTime") or _now_string(now)
        changed = True
    elif not existing.get("lastTransitionTime"):
        existing["lastTransitionTime"] = condition.get("lastTransitionTime") or _now_string(now)
        changed = True
    for field in _REPLACED:
        if field == "observedGeneration":
            old, new_value = _generation(existing), _generation(condition)
        else:
            old, new_value = existing.get(field, ""), condition.get(field, "")
        if old == new_value:
            continue
        if new_value is None:
            existing.pop(field, None)
        else:
            existing[field] = new_value
        changed = True
    return changed


def remove_status_condition(
    conditions: MutableSequence[dict[str, Any]], condition_type: str
) -> bool:
    """Remove the condition of ``condition_type``; returns whether there was
    one."""
    for index, condition in enumerate(conditions):
        if isinstance(condition, Mapping) and condition.get("type") == condition_type:
            del conditions[index]
            return True
    return False


def is_status_condition_true(
    conditions: Sequence[Mapping[str, Any]] | None, condition_type: str
) -> bool:
    """Whether the condition of ``condition_type`` is there with status
    ``"True"``."""
    return is_status_condition_present_and_equal(conditions, condition_type, "True")


def is_status_condition_false(
    conditions: Sequence[Mapping[str, Any]] | None, condition_type: str
) -> bool:
    """Whether the condition of ``condition_type`` is there with status
    ``"False"`` (an absent or ``"Unknown"`` condition is neither true nor
    false)."""
    return is_status_condition_present_and_equal(conditions, condition_type, "False")


def is_status_condition_present_and_equal(
    conditions: Sequence[Mapping[str, Any]] | None, condition_type: str, status: str
) -> bool:
    """Whether the condition of ``condition_type`` is there with ``status``."""
    found = find_status_condition(conditions, condition_type)
    return found is not None and found.get("status") == status
