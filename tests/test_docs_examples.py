"""Every ``.. code-block:: python`` in the docs runs here.

The blocks of one page run in order in one namespace, so a page can build an
example up step by step. Blocks that are not meant to run use another
language tag (``console``, ``text``).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(r"^\.\. code-block:: python\n((?:\n|[ \t]+.*\n)+)", re.MULTILINE)


def _blocks(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    out = []
    for match in BLOCK.finditer(text):
        body = [ln for ln in match.group(1).splitlines() if not ln.lstrip().startswith(":")]
        out.append(textwrap.dedent("\n".join(body)))
    return out


PAGES = sorted(p for p in DOCS.rglob("*.rst") if _blocks(p))


def test_docs_have_runnable_examples() -> None:
    assert PAGES, "no runnable examples found in docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_docs_page_examples_run(page: Path) -> None:
    namespace: dict[str, object] = {"__name__": f"docs_example_{page.stem}"}
    for number, source in enumerate(_blocks(page), 1):
        code = compile(source, f"{page.name}[block {number}]", "exec", dont_inherit=True)
        exec(code, namespace)  # running our own documentation
