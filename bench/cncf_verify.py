"""`aicr evidence verify DIR...` over 60 real CNCF submissions in one call (goal <= 3 s).

The corpus of real, merged submissions ($AICR_CNCF_SUBMISSIONS, else the shared fixtures
beside the checkout, as .ci/run sets it) holds fewer than 60, so each is copied under a
new folder name until there are 60: the verifier reads every copy afresh, and its
verdicts do not depend on the folder's name (only on the vX.Y above it).

Usage: python bench/cncf_verify.py [--runs N] [--count 60]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import figures  # lives beside this file

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "fixtures" / "cncf-submissions"


def copies(corpus: Path, root: Path, count: int) -> list[Path]:
    """``count`` submissions below ``root``: the corpus's, copied in turn as often as needed."""
    real = sorted(p.parent for p in corpus.glob("v*/*/PRODUCT.yaml"))
    made = []
    for n, source in zip(range(count), itertools.cycle(real), strict=False):
        target = root / source.parent.name / f"{source.name}-{n:02d}"
        shutil.copytree(source, target)
        made.append(target)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--count", type=int, default=60)
    args = parser.parse_args()
    corpus = Path(os.environ.get("AICR_CNCF_SUBMISSIONS") or DEFAULT_CORPUS)
    name = f"verify {args.count} submissions, one call"
    if not any(corpus.glob("v*/*/PRODUCT.yaml")):
        print(f"{name:34s} not measured: no vX.Y/<dir>/PRODUCT.yaml under {corpus}")
        return
    aicr = shutil.which("aicr") or str(Path(sys.executable).parent / "aicr")
    with tempfile.TemporaryDirectory() as tmp:
        dirs = copies(corpus, Path(tmp), args.count)
        wall, _ = figures.timed([aicr, "evidence", "verify", *map(str, dirs)], args.runs, warm=1)
        real = len({d.name.rsplit("-", 1)[0] + d.parent.name for d in dirs})
    print(figures.line(name, wall, 3.0, note=f"{real} real submissions, copied in turn"))


if __name__ == "__main__":
    main()
