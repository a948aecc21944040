"""``aicr --help`` is printed from ``aicr.cli.root_help`` without importing click (issue 34).

The stored text must be exactly what the root click group renders wherever the shortcut
is taken (80 columns and wider: click never wraps wider than 78); narrower terminals go
through click itself. ``make golden`` (AICR_UPDATE_GOLDEN=1) rewrites the module from the
group after a deliberate change of the root help; review it with ``git diff``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from aicr.cli import root_help
from aicr.cli.main import run
from aicr.cli.root import cli

MODULE = Path(root_help.__file__)
HEADER = '''"""The root group's ``--help`` text as click renders it from 80 columns on (generated).

``aicr.cli.main`` prints it for ``aicr --help`` so that answer needs no click. Written by
``make golden`` from ``aicr.cli.root``; tests/unit/cli/test_root_help.py fails when the
two differ.
"""

TEXT = (
'''


def rendered(columns: int, monkeypatch: pytest.MonkeyPatch) -> str:
    """What click prints for ``aicr --help`` at ``columns`` (its own help machinery)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    with click.Context(cli, info_name="aicr", **cli.context_settings) as ctx:
        return ctx.get_help()


def module_source(text: str) -> str:
    # one JSON string literal per line: valid Python, and the double quotes ruff format keeps
    lines = text.splitlines(keepends=True)
    body = "".join(f"    {json.dumps(line, ensure_ascii=False)}\n" for line in lines)
    return f"{HEADER}{body})\n"


def test_stored_help_is_the_groups_help(monkeypatch: pytest.MonkeyPatch) -> None:
    text = rendered(80, monkeypatch)
    if os.environ.get("AICR_UPDATE_GOLDEN") == "1":
        MODULE.write_text(module_source(text), encoding="utf-8")
    else:  # this interpreter imported the module before any rewrite
        assert text == root_help.TEXT
    assert MODULE.read_text(encoding="utf-8") == module_source(text)


@pytest.mark.parametrize("columns", [80, 81, 120, 400])
def test_click_renders_the_same_from_80_columns_on(columns: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert rendered(columns, monkeypatch) == root_help.TEXT


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_the_shortcut_prints_what_click_prints(flag: str, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert run([flag]) == 0
    assert capsys.readouterr().out == rendered(100, monkeypatch) + "\n"


def test_a_narrow_terminal_gets_clicks_wrapping(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert run(["--help"]) == 0
    out = capsys.readouterr().out
    assert out == rendered(60, monkeypatch) + "\n"
    assert out != root_help.TEXT + "\n"


def test_help_with_anything_else_goes_through_click(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert run(["--help", "--debug"]) == 0
    assert capsys.readouterr().out == rendered(100, monkeypatch) + "\n"


def test_the_shortcut_imports_no_click() -> None:
    code = ("import sys; from aicr.cli.main import run; code = run(['--help']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'click'), "
            "file=sys.stderr); sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "80"}, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == "[]"
    assert proc.stdout == root_help.TEXT + "\n"
