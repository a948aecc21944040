"""The benchmark inputs give byte for byte the outputs main gave before the speed work.

Goldens in tests/data/golden/bench/ were captured on main before the first start-up or
verify change (reviewed; refresh with AICR_UPDATE_GOLDEN=1 only for a deliberate change of
output). The large render case (1,000 x 100 KiB) is too slow for the unit suite: its
digests are compared by ``make bench`` (bench/cncf_render.py), from the same golden folder.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from aicr.cli.main import run
from golden import stable

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden" / "bench"
RECIPE = ROOT / "recipes" / "h100-eks-ubuntu-training.yaml"
SNAPSHOT = ROOT / "tests" / "data" / "snapshots" / "ok.yaml"


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("AICR_UPDATE_GOLDEN") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from main's output"


def aicr(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed CLI in a fresh interpreter, as the benchmark runs it."""
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("AICR_DEBUG", None)
    env.pop("AICR_LOG_JSON", None)
    code = "import sys; from aicr.cli.main import run; sys.exit(run(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def bench_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_help_is_unchanged() -> None:
    proc = aicr("--help")
    golden("help.txt",
           f"exit {proc.returncode}\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}")


def test_validate_no_cluster_is_unchanged(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc = aicr("validate", "-r", str(RECIPE), "-s", str(SNAPSHOT), "--no-cluster",
                "-o", str(report))
    body = json.dumps(stable(json.loads(report.read_text(encoding="utf-8"))), indent=2)
    body = body.replace(str(ROOT), "<root>")
    stderr = proc.stderr.replace(str(tmp_path), "<tmp>").replace(str(ROOT), "<root>")
    stderr = _durations_masked(stderr)
    golden("validate-no-cluster.txt",
           f"exit {proc.returncode}\n--- stdout\n{proc.stdout}--- stderr\n{stderr}"
           f"--- report (volatile values masked)\n{body}\n")


def _durations_masked(table: str) -> str:
    """The summary table with each check's measured duration (`0.0s`; a loaded machine
    shows `0.2s`) masked to the same width, so the layout is still compared."""
    return re.sub(r"(?<=│ )\d+\.\ds(?= )", lambda m: "#" * len(m.group()), table)


def test_realistic_render_is_unchanged(tmp_path: Path) -> None:
    render = bench_module("cncf_render")
    result = render.write_case(tmp_path, 15, 300)
    golden("render-realistic.sha256", render.tree_digests(result.path))



CORPUS = os.environ.get("AICR_CNCF_SUBMISSIONS", "")


def corpus_dirs() -> list[Path]:
    return sorted(p.parent for p in Path(CORPUS).glob("v*/*/PRODUCT.yaml"))


@pytest.mark.skipif(not CORPUS, reason="real CNCF submissions: set AICR_CNCF_SUBMISSIONS")
def test_single_verify_verdicts_are_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = []
    for directory in corpus_dirs():
        code = run(["evidence", "verify", str(directory)])
        out, err = capsys.readouterr()
        rel = directory.relative_to(CORPUS).as_posix()
        blocks.append(f"$ verify {rel}\nexit {code}\n--- stdout\n{out}--- stderr\n{err}")
    golden("verify-real.txt", "".join(blocks).replace(CORPUS, "<corpus>"))


@pytest.mark.skipif(not CORPUS, reason="real CNCF submissions: set AICR_CNCF_SUBMISSIONS")
def test_one_call_over_many_gives_each_single_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    """Several directories: each one's block exactly as alone, in order; exit 8 if any fails."""
    blocks = (GOLDEN / "verify-real.txt").read_text(encoding="utf-8").split("$ verify ")[1:]
    want_out, want_err, codes = "", "", []
    for block in blocks:
        head, rest = block.split("\n--- stdout\n")
        out, err = rest.split("--- stderr\n")
        codes.append(int(head.splitlines()[1].removeprefix("exit ")))
        want_out, want_err = want_out + out, want_err + err
    dirs = corpus_dirs()
    assert len(dirs) == len(blocks) and 0 in codes and 1 in codes
    code = run(["evidence", "verify", *map(str, dirs)])
    out, err = capsys.readouterr()
    assert out.replace(CORPUS, "<corpus>") == want_out
    assert err.replace(CORPUS, "<corpus>") == want_err
    assert code == 8
    valid = [str(d) for d, c in zip(dirs, codes, strict=True) if c == 0]
    assert run(["evidence", "verify", *valid]) == 0
