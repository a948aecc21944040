"""Property: `aicr validate --no-cluster` on hostile inputs exits 0 or 2, never a traceback.

A well-formed snapshot that lacks the recipe's readings fails the readiness gate:
exit 8 is the right answer there, and only there (make fuzz found such a snapshot).

One of recipe, snapshot and config is hostile at a time (the others valid), the run
stays within the time and memory bound of ``bounds.bounded``, and it writes
nothing but the -o report: the working folder and the inputs' folder stay as they
were.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import fuzz_inputs as inputs
import pytest
from fuzz_bounds import bounded
from hypothesis import example, given
from hypothesis import strategies as st

from aicr.cli.main import run


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-validate")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@example("snapshot", b"kind: Snapshot\napiVersion: aicr.nvidia.com/v1alpha1\nmetadata:\n s: g")
@given(
    st.sampled_from(["recipe", "snapshot", "config"]),
    st.one_of(inputs.hostile(inputs.RECIPE), inputs.hostile(inputs.SNAPSHOT),
              inputs.hostile(inputs.CONFIG)),
)  # fmt: skip
def test_validate_exits_0_or_2(folder: Path, which: str, data: bytes) -> None:
    given_inputs = folder / "in"
    work, out = folder / "work", folder / "out"
    for d in (given_inputs, work, out):
        d.mkdir(exist_ok=True)
    texts = {"recipe": inputs.RECIPE, "snapshot": inputs.SNAPSHOT, "config": inputs.CONFIG}
    for name, text in texts.items():
        (given_inputs / f"{name}.yaml").write_bytes(data if name == which else text.encode())
    report = out / "report.json"
    report.unlink(missing_ok=True)
    before_inputs, before_work = _tree(given_inputs), _tree(work)
    args = ["validate", "--no-cluster", "-o", str(report),
            *(f"--{n}={given_inputs / f'{n}.yaml'}" for n in texts)]  # fmt: skip
    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = bounded(lambda: run(args))
    finally:
        os.chdir(cwd)
    gate_failed = "readiness gate: failed" in err.getvalue()
    assert code in (0, 2) or (code == 8 and gate_failed), err.getvalue()
    assert "internal error" not in err.getvalue() and "Traceback" not in err.getvalue()
    if code == 2:
        assert err.getvalue().startswith("error: "), err.getvalue()
    assert _tree(given_inputs) == before_inputs and _tree(work) == before_work
    assert {p.name for p in out.iterdir()} <= {"report.json"}
