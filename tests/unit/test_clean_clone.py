"""The unit suite passes from a copy of the checkout with nothing beside it.

Tests must carry their own fixtures (tests/data); a test that reads a sibling
folder of the checkout passes on its authors' machines only. This copies what a
clone would hold (tracked and new, not ignored, files) into an empty temporary
folder and runs the unit suite there, without $AICR_CNCF_SUBMISSIONS.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
THIS = Path(__file__).resolve().relative_to(REPO).as_posix()
DROPPED_ENV = ("AICR_CNCF_SUBMISSIONS", "AICR_UPDATE_GOLDEN", "PYTEST_ADDOPTS")


def _checkout_files() -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs a git checkout (lists the files a clone holds)")
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True, timeout=60,
    ).stdout.decode()
    return [f for f in out.split("\0") if f and (REPO / f).is_file()]


def test_unit_suite_passes_from_a_clone_with_nothing_beside_it(tmp_path: Path) -> None:
    clone = tmp_path / "aicr"
    for rel in _checkout_files():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, clone / rel)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aicr"]  # no sibling folder
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env["PYTHONPATH"] = str(clone / "src")  # the copy's package, not the checkout's
    where = subprocess.run([sys.executable, "-c", "import aicr; print(aicr.__file__)"],
                           cwd=clone, env=env, capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(str(clone)), where.stdout + where.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/unit", "-q", "-x", "-p", "no:cacheprovider",
         f"--ignore={THIS}"],  # this test must not run itself again
        cwd=clone, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    tail = "\n".join(proc.stdout.splitlines()[-25:])
    assert proc.returncode == 0, tail
    assert " passed" in tail and "error" not in tail.splitlines()[-1], tail
