"""Structured logging of the toolkit: a reconcile's log lines carry the
controller, kind, key and a reconcile id unique to the call (the toolkit's
own lines through ``extra``, the reconcile's own lines through the handler
``configure_logging`` installs), and no line carries an object's contents."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from informers.cache.informer import SharedIndexInformer
from informers.testing import ApiServer
from informers.toolkit.runtime import Controller, InformerSource, Request, current_context
from informers.toolkit.runtime.context import current_log_fields
from informers.util.logfmt import configure_logging, record_extras
from informers.wire.resources import PODS
from tests.helpers import new_pod

SECRET = "s3cret-label-value-do-not-log"
user_log = logging.getLogger("tests.reconciler")


@pytest.fixture
def json_lines() -> Iterator[Callable[[], list[dict[str, Any]]]]:
    """Everything logged at DEBUG, as parsed JSON lines (the CLI's handler)."""
    root = logging.getLogger()
    level = root.level
    stream = io.StringIO()
    handler = configure_logging("json", "debug", stream=stream, context=current_log_fields)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)
    root.setLevel(level)


def run_controller(
    api_server: ApiServer,
    make_informer: Callable[..., SharedIndexInformer],
    reconcile: Callable[[Request], None],
    done: Callable[[], bool],
) -> None:
    informer = make_informer()
    controller = Controller("pod-logger", reconcile, [InformerSource(informer)])
    informer.start()
    controller.start()
    try:
        assert done()  # may block until the reconciles it waits for ran
        assert controller.wait_idle(10)
    finally:
        controller.stop()


def test_a_reconciles_lines_carry_controller_kind_key_and_reconcile_id(
    api_server: ApiServer,
    make_informer: Callable[..., SharedIndexInformer],
    json_lines: Callable[[], list[dict[str, Any]]],
) -> None:
    api_server.create(PODS, new_pod("web", app=SECRET))
    api_server.create(PODS, new_pod("db", app=SECRET))
    ids: dict[str, str] = {}
    failed = threading.Event()
    retried = threading.Event()

    def reconcile(request: Request) -> None:
        context = current_context()
        assert context is not None
        ids.setdefault(request.name, context.reconcile_id)
        user_log.info("reconciling %s", request)  # no extra: the handler adds it
        if request.name == "web":
            if failed.is_set():
                retried.set()
            else:
                failed.set()
                raise RuntimeError("first attempt fails")

    run_controller(api_server, make_informer, reconcile, lambda: retried.wait(10))
    lines = json_lines()
    mine = [line for line in lines if line["logger"] == "tests.reconciler"]
    assert {line["key"] for line in mine} == {"default/web", "default/db"}
    for line in mine:
        assert line["controller"] == "pod-logger"
        assert line["kind"] == "pods"
        assert len(line["reconcile_id"]) == 12
    # Every call has an id of its own; the controller's line about the
    # failed call carries that call's id.
    assert len({line["reconcile_id"] for line in mine}) == len(mine) == 3
    failure = [line for line in lines if "failed (1 time(s) in a row)" in line["message"]]
    assert len(failure) == 1
    assert failure[0]["controller"] == "pod-logger"
    assert failure[0]["kind"] == "pods"
    assert failure[0]["key"] == "default/web"
    assert failure[0]["reconcile_id"] == ids["web"]
    assert "RuntimeError: first attempt fails" in failure[0]["exception"]


def test_every_toolkit_line_carries_context_and_never_an_objects_contents(
    api_server: ApiServer,
    make_informer: Callable[..., SharedIndexInformer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """At DEBUG, through a start, reconciles that succeed, fail and requeue,
    and a stop: each line the toolkit writes carries its context in its
    record (not only in the message), and no line -- message, extras or
    traceback -- holds a label value of the objects reconciled."""
    for i in range(3):
        api_server.create(PODS, new_pod(f"p{i}", app=SECRET))
    seen: set[str] = set()
    calls: list[str] = []
    lock = threading.Lock()
    finished = threading.Event()  # three first calls and p1's retry

    def reconcile(request: Request) -> None:
        with lock:
            first = request.name not in seen
            seen.add(request.name)
            calls.append(request.name)
            if len(calls) >= 4:
                finished.set()
        if first and request.name == "p1":
            raise ValueError(f"cannot handle {request}")

    caplog.set_level(logging.DEBUG)
    run_controller(api_server, make_informer, reconcile, lambda: finished.wait(10))
    toolkit = [r for r in caplog.records if r.name.startswith("informers.toolkit")]
    assert toolkit
    for rec in toolkit:
        extras = record_extras(rec)
        assert extras, rec.getMessage()
        if rec.name == "informers.toolkit.runtime.controller":
            assert extras["controller"] == "pod-logger"
            assert extras["kind"] == "pods"
        rendered = caplog.text + json.dumps(extras, default=str)
        assert SECRET not in rendered
    finish = [r for r in toolkit if "reconciled" in r.getMessage() or "failed" in r.getMessage()]
    assert {record_extras(r)["key"] for r in finish} >= {"default/p0", "default/p1", "default/p2"}
    assert all(len(record_extras(r)["reconcile_id"]) == 12 for r in finish)
