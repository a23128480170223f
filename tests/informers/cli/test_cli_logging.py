"""``--log-format`` and ``--log-level`` of the subcommands: JSON lines that
parse, text lines with key=value context, the level honoured, and the root
logger left as it was."""

from __future__ import annotations

import json
import logging

import pytest

from informers.cli import main

WATCH = ["watch", "pods", "--embedded", "--objects", "6", "--duration", "0.3", "--output", "json"]


def test_json_log_lines_parse_and_carry_their_fields(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    assert main([*WATCH, "--log-format", "json", "--log-level", "info"]) == 0
    assert root.handlers == handlers
    assert root.level == level
    err = capsys.readouterr().err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert lines, err
    assert all({"time", "level", "logger", "message", "thread"} <= line.keys() for line in lines)
    assert {line["level"] for line in lines} <= {"INFO", "WARNING", "ERROR"}
    assert any(line["message"] == "pods: informer started" for line in lines), err
    assert len(lines) == len([line for line in err.splitlines() if line.strip()])


def test_text_log_lines_and_the_level(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*WATCH, "--log-level", "debug"]) == 0
    debug = capsys.readouterr().err
    assert " DEBUG informers." in debug
    assert " INFO informers.cache.informer: pods: informer started" in debug
    assert main(WATCH) == 0  # default: errors only
    assert " INFO " not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["demo", "serve", "mirror", "watch"])
def test_every_subcommand_takes_the_logging_flags(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "--log-format {text,json}" in out
    assert "--log-level {debug,info,warning,error}" in out


def test_an_unknown_log_format_is_an_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*WATCH, "--log-format", "xml"])
    assert exited.value.code == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err
