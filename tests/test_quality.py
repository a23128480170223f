"""The static checks are part of the test suite: mypy --strict on both
packages, ruff on the whole tree, and the Sphinx docs built with warnings as
errors. Each runs the real tool in a subprocess."""

from __future__ import annotations

import importlib
import pkgutil
import posixpath
import subprocess
import sys
from pathlib import Path

import pytest
from sphinx.util.inventory import InventoryFile

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_mypy_strict_on_both_packages() -> None:
    result = _run("mypy", "--strict", "informers", "tracker")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_clean() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_clean() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def docs_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One warnings-as-errors Sphinx build of docs/ for the tests below:
    the output folder and what sphinx printed (empty return code check is
    the first test's)."""
    out = tmp_path_factory.mktemp("docs")
    result = _run("sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(out))
    return out, "" if result.returncode == 0 else result.stdout + result.stderr


@pytest.mark.slow
def test_docs_build_with_warnings_as_errors(docs_build: tuple[Path, str]) -> None:
    _, failure = docs_build
    assert not failure, failure


def _public_modules() -> list[str]:
    names = []
    for package in ("informers", "tracker"):
        module = importlib.import_module(package)
        names.append(package)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return names


def _documented(inventory: set[str], module: str, name: str, obj: object) -> bool:
    """Documented under ``module``, or under any module that exports the
    same object by the same name (a package re-export is documented where
    the object is defined)."""
    if f"{module}.{name}" in inventory:
        return True
    return any(
        entry.rsplit(".", 1)[-1] == name
        and getattr(sys.modules.get(entry.rsplit(".", 1)[0]), name, None) is obj
        for entry in inventory
    )


@pytest.mark.slow
def test_every_public_name_has_an_api_reference_entry(docs_build: tuple[Path, str]) -> None:
    """Every name in a public module's ``__all__`` has an entry in the API
    reference, and so has every public method and property of every public
    class (the factory's ``pods()`` helpers included)."""
    out, _ = docs_build
    with (out / "objects.inv").open("rb") as stream:
        inventory_file = InventoryFile.load(stream, "", posixpath.join)
    entries = getattr(inventory_file, "data", inventory_file)
    inventory = {name for objects in entries.values() for name in objects}
    missing = []
    for module_name in _public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if not _documented(inventory, module_name, name, obj):
                missing.append(f"{module_name}.{name}")
                continue
            if isinstance(obj, type) and obj.__module__ == module_name:
                for member, value in vars(obj).items():
                    if member.startswith("_") or not (
                        callable(value) or isinstance(value, property | classmethod | staticmethod)
                    ):
                        continue
                    if f"{module_name}.{name}.{member}" not in inventory:
                        missing.append(f"{module_name}.{name}.{member}")
    assert not missing, "no API reference entry for: " + ", ".join(sorted(set(missing)))
