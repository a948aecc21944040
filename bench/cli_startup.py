"""Start-up where a user waits: `aicr --help` and `aicr validate --no-cluster` (issue 34).

Goals on the 2-core development machine: `aicr --help` <= 0.05 s; `validate
--no-cluster` on the h100 recipe (18 checks planned) <= 0.3 s and <= 2.5x the time to
import pydantic, yaml, click and rich (the reference line). Each line gives min, median
and max wall time, and the median CPU time, which a busy shared machine disturbs less.

Usage: python bench/cli_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import figures  # lives beside this file

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "recipes/h100-eks-ubuntu-training.yaml"
SNAPSHOT = REPO / "tests/data/snapshots/ok.yaml"
REFERENCE = "import pydantic, yaml, click, rich"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    aicr = shutil.which("aicr") or str(Path(sys.executable).parent / "aicr")
    validate = [aicr, "validate", "-r", str(RECIPE), "-s", str(SNAPSHOT), "--no-cluster",
                "-o", "/dev/null"]
    ref_wall, ref_cpu = figures.timed([sys.executable, "-c", REFERENCE], args.runs)
    print(figures.line("reference: " + REFERENCE.removeprefix("import "), ref_wall,
                       None, note=f"cpu median {statistics.median(ref_cpu):.3f} s"))
    for name, cmd, goal in (("aicr --help", [aicr, "--help"], 0.05),
                            ("aicr validate --no-cluster", validate, 0.3)):
        wall, cpu = figures.timed(cmd, args.runs)
        print(figures.line(name, wall, goal, note=f"cpu median {statistics.median(cpu):.3f} s"))
    ratios = [w / statistics.median(ref_wall) for w in wall]
    cpu_ratio = statistics.median(cpu) / statistics.median(ref_cpu)
    print(figures.line("  validate / reference", ratios, 2.5, unit="x",
                       note=f"cpu ratio {cpu_ratio:.2f}x"))


if __name__ == "__main__":
    main()
