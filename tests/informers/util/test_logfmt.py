"""The structured log formatters and configure_logging: JSON lines parse and
carry the extras, text lines render them as key=value, a context logger
merges its fields, and configure_logging installs one replaceable handler."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.util.logfmt import (
    ContextLogger,
    JsonFormatter,
    TextFormatter,
    configure_logging,
    record_extras,
)


def record(message: str = "hello %s", *args: object, **extra: object) -> logging.LogRecord:
    logger = logging.getLogger("informers.test")
    made = logger.makeRecord(
        logger.name, logging.WARNING, __file__, 1, message, args or ("world",), None, extra=extra
    )
    return made


@pytest.fixture
def root() -> Iterator[logging.Logger]:
    """The root logger, with its handlers and level restored afterwards."""
    logger = logging.getLogger()
    handlers, level = list(logger.handlers), logger.level
    yield logger
    for handler in list(logger.handlers):
        if handler not in handlers:
            logger.removeHandler(handler)
    logger.setLevel(level)


def test_json_lines_parse_and_carry_the_fields() -> None:
    line = JsonFormatter().format(
        record(controller="pods", key="default/web", reconcile_id="ab12", kind="pods", n=3)
    )
    doc = json.loads(line)
    assert doc["message"] == "hello world"
    assert doc["level"] == "WARNING"
    assert doc["logger"] == "informers.test"
    assert doc["time"].endswith("Z")
    assert doc["thread"]
    assert doc["controller"] == "pods"
    assert doc["key"] == "default/web"
    assert doc["reconcile_id"] == "ab12"
    assert doc["n"] == 3
    assert "\n" not in line


def test_json_lines_carry_the_traceback_and_stringify_other_values() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        made = record(extra_object=object())
        made.exc_info = sys.exc_info()
    doc = json.loads(JsonFormatter().format(made))
    assert "ValueError: boom" in doc["exception"]
    assert doc["extra_object"].startswith("<object object")


def test_text_lines_render_the_context_first() -> None:
    line = TextFormatter().format(
        record(zeta="z", reconcile_id="ab12", key="default/web", controller="pods", note="a b")
    )
    head, tail = line.split(" informers.test: ")
    assert head.endswith("Z WARNING")
    assert tail == 'hello world controller=pods key=default/web reconcile_id=ab12 note="a b" zeta=z'


def test_record_extras_are_only_what_extra_added() -> None:
    assert record_extras(record()) == {}
    assert record_extras(record(kind="pods", gone=None)) == {"kind": "pods"}


def test_a_context_logger_merges_call_fixed_and_thread_fields() -> None:
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, rec: logging.LogRecord) -> None:
            seen.append(rec)

    base = logging.getLogger("informers.test.adapter")
    base.addHandler(keep := Keep())
    base.setLevel(logging.DEBUG)
    try:
        context = {"controller": "thread", "key": "thread-key", "reconcile_id": "r1"}
        logger = ContextLogger(base, {"controller": "fixed"}, lambda: context)
        logger.info("one")
        logger.info("two", extra={"key": "call-key"})
    finally:
        base.removeHandler(keep)
        base.setLevel(logging.NOTSET)
    one, two = (record_extras(r) for r in seen)
    assert one == {"controller": "fixed", "key": "thread-key", "reconcile_id": "r1"}
    assert two == {"controller": "fixed", "key": "call-key", "reconcile_id": "r1"}


def test_configure_logging_installs_one_replaceable_handler(root: logging.Logger) -> None:
    first = io.StringIO()
    handler = configure_logging("json", "debug", stream=first)
    assert handler in root.handlers
    assert root.level == logging.DEBUG
    logging.getLogger("informers.test.cfg").debug("x %d", 1, extra={"kind": "pods"})
    assert json.loads(first.getvalue())["kind"] == "pods"
    second = io.StringIO()
    replaced = configure_logging("text", "warning", stream=second, context=lambda: {"key": "k"})
    assert handler not in root.handlers
    assert replaced in root.handlers
    logging.getLogger("informers.test.cfg").info("hidden")
    logging.getLogger("informers.test.cfg").warning("shown")
    assert second.getvalue().rstrip().endswith("shown key=k")
    assert "hidden" not in second.getvalue()


@pytest.mark.parametrize(("fmt", "level"), [("xml", "info"), ("json", "loud")])
def test_configure_logging_refuses_unknown_values(fmt: str, level: str) -> None:
    with pytest.raises(ValueError, match="log"):
        configure_logging(fmt, level)  # type: ignore[arg-type]


_names = st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True).filter(
    lambda n: (
        n not in logging.LogRecord("", 0, "", 0, "", None, None).__dict__
        and n not in ("message", "asctime", "taskName", "time", "level", "logger", "thread")
    )
)


@given(message=st.text(), extras=st.dictionaries(_names, st.text() | st.integers(), max_size=5))
def test_json_lines_round_trip_any_message_and_extras(
    message: str, extras: dict[str, object]
) -> None:
    made = logging.LogRecord("informers.x", logging.INFO, __file__, 1, message, None, None)
    for name, value in extras.items():
        setattr(made, name, value)
    doc = json.loads(JsonFormatter().format(made))
    assert doc["message"] == message
    for name, value in extras.items():
        assert doc[name] == value
    text = TextFormatter().format(made)
    assert text.startswith(f"{doc['time']} INFO informers.x: {message}")
    assert all(f" {name}=" in text for name in extras)
