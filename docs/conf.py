"""Sphinx configuration for kube-informers."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

project = "kube-informers"
author = "the kube-informers developers"
copyright = "2026, the kube-informers developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
nitpicky = False
exclude_patterns = ["_build"]
html_theme = "alabaster"
suppress_warnings = ["ref.python"]
