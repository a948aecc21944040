"""AICR_CNCF_SUBMISSIONS decides the real-submission tests: unset skips in one line, a wrong
folder fails, and CI=true (which GitHub sets on every run) changes neither."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS_TESTS = Path(__file__).with_name("test_real_submissions.py")


def run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("AICR_CNCF_SUBMISSIONS", "CI")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(CORPUS_TESTS), "-q", "-rs", "-p", "no:cacheprovider"],
        cwd=tmp_path, env={**base, **env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("ci", [{}, {"CI": "true"}], ids=["local", "ci-true"])
def test_unset_skips_with_one_line_saying_how(tmp_path: Path, ci: dict[str, str]) -> None:
    proc = run(tmp_path, **ci)
    skips = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED")]
    assert proc.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, proc.stdout  # module skipped
    assert len(skips) == 1 and "set AICR_CNCF_SUBMISSIONS to a folder" in skips[0], proc.stdout


def test_a_missing_folder_fails(tmp_path: Path) -> None:
    proc = run(tmp_path, AICR_CNCF_SUBMISSIONS=str(tmp_path / "nope"))
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, proc.stdout  # a collection error
    assert f"AICR_CNCF_SUBMISSIONS={tmp_path / 'nope'}: not a folder" in proc.stdout
