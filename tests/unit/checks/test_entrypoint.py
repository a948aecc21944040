from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from aicr.checks import entrypoint
from aicr.ctrf import Status
from aicr.result import CheckResult

RUN_JSON = {"runId": "r0123abcd", "namespace": "aicr-validation", "workloads": {}}
RECIPE = "componentRefs: []\n"
CONFIG = "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    (tmp_path / "run.json").write_text(json.dumps(RUN_JSON))
    (tmp_path / "recipe.yaml").write_text(RECIPE)
    (tmp_path / "config.yaml").write_text(CONFIG)
    return tmp_path


@pytest.fixture
def unimplemented(monkeypatch: pytest.MonkeyPatch) -> str:
    """A catalog check whose module has no ``run`` (every real one may be implemented)."""
    monkeypatch.setattr(entrypoint.registry, "find", lambda spec: None)
    return "platform-health"


def test_unimplemented_check_fails_as_not_implemented(
    run_dir: Path, tmp_path: Path, unimplemented: str
) -> None:
    term = tmp_path / "termination-log"
    code = entrypoint.execute(unimplemented, run_dir, result_configmap=None, termination_log=term)
    assert code == 1
    summary = json.loads(term.read_text())
    assert summary["status"] == "failed"
    assert summary["message"].startswith("not implemented:")


def test_bad_inputs_end_other_with_exit_3(tmp_path: Path) -> None:
    term = tmp_path / "t"
    code = entrypoint.execute(
        "platform-health", tmp_path, result_configmap=None, termination_log=term
    )
    assert code == 3
    summary = json.loads(term.read_text())
    assert summary["status"] == "other"
    assert "run.json" in summary["message"]


def test_a_check_that_raises_ends_other(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(ctx: object) -> CheckResult:
        raise RuntimeError("kaput")

    monkeypatch.setattr(entrypoint.registry, "find", lambda spec: boom)
    result = entrypoint.run_check("platform-health", entrypoint.load_inputs(run_dir))
    assert result.status == Status.OTHER
    assert result.message == "check raised RuntimeError: kaput"


def test_summary_fits_the_termination_message_limit() -> None:
    result = CheckResult(name="x", status=Status.FAILED, message="é" * 10_000)
    text = entrypoint.summary(result)
    assert len(text.encode()) <= 4096
    assert json.loads(text)["status"] == "failed"


def test_cli_exit_code_follows_status(run_dir: Path, unimplemented: str) -> None:
    from aicr.cli.main import cli

    out = CliRunner().invoke(
        cli, ["check", "run", unimplemented, "--run-dir", str(run_dir)], standalone_mode=False
    )
    assert out.exception is None, out.output
    assert out.return_value == 1
    assert f"{unimplemented}: failed: not implemented" in out.output
