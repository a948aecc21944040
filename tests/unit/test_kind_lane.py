"""The kind workflow's data: its recipe plans, its expectations cover exactly that plan,
and the report comparison catches every kind of mismatch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aicr.catalog import load_catalog
from aicr.config import EMPTY_CONFIG
from aicr.phases import Phase
from aicr.plan import build
from aicr.recipe.load import load_recipe
from kindlane import EXPECTED, KIND, check_report


def test_expectations_cover_exactly_the_planned_checks() -> None:
    recipe = load_recipe(str(KIND / "recipe.yaml"))
    plan = build(recipe, load_catalog(), phases=[Phase.DEPLOYMENT, Phase.CONFORMANCE],
                 config=EMPTY_CONFIG)  # fmt: skip
    assert [c.name for c in plan.checks] == list(EXPECTED)
    assert {e["status"] for e in EXPECTED.values()} <= {"passed", "skipped"}
    assert not any(c.gpus for c in plan.checks)  # a GPU-less cluster


def report(*tests: tuple[str, str, str]) -> dict[str, Any]:
    return {"results": {"tests": [{"name": n, "status": s, "message": m} for n, s, m in tests]}}


def matching() -> list[tuple[str, str, str]]:
    return [(name, e["status"], e.get("message", "ok")) for name, e in EXPECTED.items()]


def test_a_matching_report_has_no_problems() -> None:
    assert check_report.compare(report(*matching()), EXPECTED) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda t: t[1:], "operator-health: not in the report"),
        (lambda t: [*t, ("extra", "passed", "")], "extra: in the report but not expected"),
        (lambda t: [(t[0][0], "failed", "boom"), *t[1:]],
         "operator-health: failed (boom), expected skipped"),
        (lambda t: [(t[0][0], "skipped", "other reason"), *t[1:]],
         "operator-health: message 'other reason', expected 'not applicable: the recipe "
         "deploys no gpu-operator'"),
    ],
    ids=["missing", "unexpected", "status", "message"],
)
def test_each_mismatch_is_named(change: Any, problem: str) -> None:
    assert check_report.compare(report(*change(matching())), EXPECTED) == [problem]


def test_main_exits_1_on_a_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report(*matching()[1:])))
    assert check_report.main([str(path), str(KIND / "expected.yaml")]) == 1
    assert "MISMATCH operator-health: not in the report" in capsys.readouterr().err
    path.write_text(json.dumps(report(*matching())))
    assert check_report.main([str(path), str(KIND / "expected.yaml")]) == 0
