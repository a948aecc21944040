"""Every command's --help reads as prose: no click markup leaks into the text."""

from __future__ import annotations

import pytest

from aicr.cli.main import run

COMMANDS = [[], ["validate"], ["evidence"], ["evidence", "render"], ["evidence", "verify"],
            ["check"], ["check", "list"], ["check", "run"], ["cleanup"], ["completion"],
            ["snapshot"], ["images"]]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) or "aicr" for c in COMMANDS])
def test_help_shows_no_literal_markup(command: list[str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert run([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "\\b" not in out and "\b" not in out
    assert out.startswith("Usage: aicr")


@pytest.mark.parametrize("command", [[], ["validate"]], ids=["aicr", "validate"])
def test_exit_codes_paragraph_starts_a_line(command: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    run([*command, "--help"])
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert any(line.startswith("Exit codes: 0 ") for line in lines)
