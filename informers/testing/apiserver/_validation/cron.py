"""Cron schedules as CronJob validation parses them (robfig/cron v3
``ParseStandard``): five fields (minute, hour, day of month, month, day of
week; names for months and days; ``*``, ``?``, ranges, steps and lists), or
a descriptor (``@hourly``, ``@every 1h``...), optionally after ``TZ=``.

:func:`schedule_error` returns the parser's error text, or None. Pure;
thread-safe.
"""

from __future__ import annotations

import re

__all__ = ["schedule_error"]

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
#: (min, max, names) of the five fields.
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_DESCRIPTORS = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_DURATION = re.compile(r"([0-9]*(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+\Z")


class _CronError(Exception):
    pass


def _atoi(text: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise _CronError(
            f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
        )
    number = int(text)
    if number < 0:
        raise _CronError(f"negative number ({number}) not allowed: {text}")
    return number


def _int_or_name(text: str, named: dict[str, int]) -> int:
    if named and text.lower() in named:
        return named[text.lower()]
    return _atoi(text)


def _range(expr: str, low: int, high: int, named: dict[str, int]) -> None:
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    if low_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(low_high[0], named)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int_or_name(low_high[1], named)
        else:
            raise _CronError(f"too many hyphens: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if len(low_high) == 1:
            end = high
    elif len(range_and_step) > 2:
        raise _CronError(f"too many slashes: {expr}")
    if start < low:
        raise _CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise _CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise _CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise _CronError(f"step of range should be a positive number: {expr}")


def schedule_error(schedule: str) -> str | None:
    """The parse error of ``schedule`` as cron words it, or None."""
    spec = schedule
    if not spec:
        return "empty spec string"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        _, _, spec = spec.partition(" ")
        spec = spec.strip()
    try:
        if spec.startswith("@"):
            if spec in _DESCRIPTORS:
                return None
            if spec.startswith("@every "):
                duration = spec[len("@every ") :]
                if not _DURATION.match(duration):
                    return f'failed to parse duration {spec}: time: invalid duration "{duration}"'
                return None
            raise _CronError(f"unrecognized descriptor: {spec}")
        fields = spec.split()
        if len(fields) != 5:
            raise _CronError(
                f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
            )
        for text, (low, high, named) in zip(fields, _BOUNDS, strict=True):
            for expr in text.split(","):
                _range(expr, low, high, named)
    except _CronError as exc:
        return str(exc)
    return None
