"""Start-up stays light: --help and --no-cluster never load the kubernetes client."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parents[2] / "data"
PROBE = """
import sys
from aicr.cli.main import run
code = run({args!r})
heavy = sorted(m for m in ("kubernetes", "httpx", "jsonschema") if m in sys.modules)
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["validate", "--help"],
        ["validate", "-r", str(DATA / "recipes/small.yaml"), "--no-cluster", "--phase",
         "deployment", "-s", str(DATA / "snapshots/ok.yaml")],
        ["images", "list", "-r", str(DATA / "recipes/small.yaml")],
    ],
    ids=["help", "validate-help", "no-cluster-run", "images-list"],
)
def test_no_heavy_modules(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(args=args)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY=\n" in proc.stderr
