"""The helpers every controller needs, on plain object dicts, with
controller-runtime's and apimachinery's rules:

* :mod:`~informers.toolkit.controllerutil.finalizers`: :func:`add_finalizer`,
  :func:`remove_finalizer`, :func:`has_finalizer`;
* :mod:`~informers.toolkit.controllerutil.owners`:
  :func:`set_controller_reference` (raises
  :class:`~informers.errors.AlreadyOwnedError`), :func:`set_owner_reference`,
  :func:`remove_owner_reference`, :func:`get_controller_of`;
* :mod:`~informers.toolkit.controllerutil.conditions`:
  :func:`set_status_condition`, :func:`find_status_condition`,
  :func:`remove_status_condition`, :func:`is_status_condition_true`,
  :func:`is_status_condition_false`;
* :mod:`~informers.toolkit.controllerutil.references`:
  :func:`object_reference`, :func:`type_meta`.

Those that change something change the dict or list in place and return
whether anything changed, so a reconcile writes only when needed. Objects
read from a cache are shared and read-only: copy one before changing it.
"""

from __future__ import annotations

from informers.toolkit.controllerutil.conditions import (
    CONDITION_STATUSES,
    find_status_condition,
    format_time,
    is_status_condition_false,
    is_status_condition_present_and_equal,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)
from informers.toolkit.controllerutil.finalizers import (
    add_finalizer,
    has_finalizer,
    remove_finalizer,
)
from informers.toolkit.controllerutil.owners import (
    get_controller_of,
    has_controller_reference,
    has_owner_reference,
    owner_reference,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from informers.toolkit.controllerutil.references import api_group, object_reference, type_meta

__all__ = [
    "CONDITION_STATUSES",
    "add_finalizer",
    "api_group",
    "find_status_condition",
    "format_time",
    "get_controller_of",
    "has_controller_reference",
    "has_finalizer",
    "has_owner_reference",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "object_reference",
    "owner_reference",
    "remove_finalizer",
    "remove_owner_reference",
    "remove_status_condition",
    "set_controller_reference",
    "set_owner_reference",
    "set_status_condition",
    "type_meta",
]
