"""What the README and the quickstart promise, checked against the code
(issue 30 items 13 and 19)."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _setup() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return parser


def _console_blocks(text: str) -> list[str]:
    return re.findall(r"```console\n(.*?)```", text, flags=re.DOTALL)


def test_the_run_command_installs_the_whole_demo() -> None:
    # The demo's API-against-database summary needs the mirror's packages.
    (run,) = [block for block in _console_blocks(README) if "kube-informers demo" in block]
    extras = re.findall(r"\.\[([a-z,]+)\]", run)
    assert extras, run
    wanted = {
        line.strip().split(">")[0].split("[")[0]
        for extra in extras[0].split(",")
        for line in _setup()["options.extras_require"][extra].splitlines()
        if line.strip() and not line.strip().startswith("#")
    }
    assert {"SQLAlchemy", "psycopg"} <= wanted


def test_the_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    (test,) = [b for b in _console_blocks(README) if "pytest" in b and "venv" not in b]
    assert test.strip() in ci.splitlines()


def test_the_readme_says_serve_runs_controllers() -> None:
    assert "nothing runs behind the" not in README.replace("\n", " ")
    assert "--no-controllers" in README


def test_the_quickstart_has_the_steps_it_announces() -> None:
    text = (ROOT / "docs" / "guide" / "quickstart.rst").read_text()
    words = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
    (announced,) = re.findall(r"in (\w+) steps", text)
    steps = re.findall(r"^(\d+)\. .+\n-+$", text, flags=re.MULTILINE)
    assert [int(n) for n in steps] == list(range(1, words[announced] + 1))
    assert "pip install kube-informers " not in text  # not published: install from source
    assert "pip install -e ." in text


def test_the_classifiers_list_the_tested_python_only() -> None:
    classifiers = _setup()["metadata"]["classifiers"]
    versions = re.findall(r"Python :: (3\.\d+)", classifiers)
    assert versions == ["3.11"]  # what CI runs
    assert "python3.12 -m venv" in README  # how to run the suite on another version
