"""Print the median wall time of `aicr --help` and of `aicr validate --no-cluster`.

Targets on the 2-core development machine: <= 0.25 s and <= 0.6 s.
Usage: python bench/cli_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "recipes/h100-eks-ubuntu-training.yaml"
SNAPSHOT = REPO / "tests/data/snapshots/ok.yaml"


def median_seconds(cmd: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    aicr = shutil.which("aicr") or str(Path(sys.executable).parent / "aicr")
    cases = {
        "aicr --help": ([aicr, "--help"], 0.25),
        "aicr validate --no-cluster": (
            [aicr, "validate", "-r", str(RECIPE), "-s", str(SNAPSHOT), "--no-cluster",
             "-o", "/dev/null"],
            0.6,
        ),
    }
    for name, (cmd, target) in cases.items():
        median_seconds(cmd, 2)  # warm the page cache and .pyc files
        value = median_seconds(cmd, args.runs)
        verdict = "ok" if value <= target else "OVER TARGET"
        print(f"{name:32s} median {value:.3f} s over {args.runs} runs (target <= {target} s) "
              f"{verdict}")


if __name__ == "__main__":
    main()
