"""``aicr.cncf`` serves each public name from its module on first use, and no other."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import aicr.cncf as cncf

INIT = Path(cncf.__file__)


def declared() -> dict[str, str]:
    """Name -> module, from the package's TYPE_CHECKING imports (what mypy sees)."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(INIT.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("aicr."):
            found.update({alias.name: node.module for alias in node.names})
    return found


def test_every_public_name_is_its_module_s_object() -> None:
    names = declared()
    assert sorted(names) == sorted(cncf.__all__)
    for name, module in names.items():
        assert getattr(cncf, name) is getattr(importlib.import_module(module), name), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        cncf.no_such_name  # type: ignore[attr-defined]  # noqa: B018


def test_the_summary_names_leave_the_writer_unloaded() -> None:
    code = ("import sys, aicr.cncf as c; c.aggregate, c.load_requirements, c.resolve_conformance, "
            "c.verify; print(sorted(m for m in sys.modules if m.startswith('aicr.cncf.') "
            "and m.split('.')[2] in {'submission', 'pages', 'redaction', 'export'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"
