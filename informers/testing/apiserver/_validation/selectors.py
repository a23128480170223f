"""Label selectors in objects (``metav1.LabelSelector``): validation
(``ValidateLabelSelector``), matching against a template's labels, and the
rendering the real server's messages use.

Pure functions over JSON values; thread-safe.
"""

from __future__ import annotations

from typing import Any

from informers.testing.apiserver._validation import names
from informers.testing.apiserver._validation.errors import FieldErrors
from informers.testing.apiserver._validation.meta import validate_labels

__all__ = ["empty", "matches", "render", "validate_selector"]

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_selector(errs: FieldErrors, path: str, selector: Any) -> bool:
    """Report what is wrong with ``selector`` at ``path``; whether it can be
    used to match (a map)."""
    if selector is None:
        return False
    if not isinstance(selector, dict):
        errs.invalid(path, selector, "invalid label selector")
        return False
    validate_labels(errs, f"{path}.matchLabels", selector.get("matchLabels"))
    expressions = selector.get("matchExpressions") or []
    if not isinstance(expressions, list):
        errs.invalid(f"{path}.matchExpressions", expressions, "must be a list")
        return False
    for i, req in enumerate(expressions):
        here = f"{path}.matchExpressions[{i}]"
        if not isinstance(req, dict):
            errs.invalid(here, req, "must be an object")
            continue
        operator = req.get("operator")
        values = req.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                errs.required(
                    f"{here}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.forbidden(
                    f"{here}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
        else:
            errs.invalid(f"{here}.operator", operator, "not a valid selector operator")
        for msg in names.qualified_name(str(req.get("key") or "")):
            errs.invalid(f"{here}.key", str(req.get("key") or ""), msg)
    return True


def empty(selector: Any) -> bool:
    """Whether a selector has no requirement (selects everything)."""
    return not isinstance(selector, dict) or not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    )


def matches(selector: Any, labels: Any) -> bool:
    """Whether ``labels`` satisfy ``selector`` (a missing selector matches
    nothing, as ``LabelSelectorAsSelector(nil)``)."""
    if not isinstance(selector, dict):
        return False
    have = labels if isinstance(labels, dict) else {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if have.get(key) != value:
            return False
    for req in selector.get("matchExpressions") or []:
        if not isinstance(req, dict):
            return False
        key, operator, values = req.get("key"), req.get("operator"), req.get("values") or []
        present = key in have
        if operator == "In" and not (present and have[key] in values):
            return False
        if operator == "NotIn" and present and have[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def render(selector: Any) -> str:
    """A ``*metav1.LabelSelector`` as the field errors print it (its
    generated ``String()``)."""
    if not isinstance(selector, dict):
        return "nil"
    labels = selector.get("matchLabels") or {}
    shown = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    exprs = "".join(
        f"LabelSelectorRequirement{{Key:{r.get('key', '')},Operator:{r.get('operator', '')},"
        f"Values:[{' '.join(str(v) for v in r.get('values') or [])}],}},"
        for r in selector.get("matchExpressions") or []
        if isinstance(r, dict)
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{shown}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
