"""Benchmark: render, redact and verify a CNCF submission from a synthetic run.

    .venv/bin/python bench/cncf_render.py [--only realistic|large] [--runs N]

(a) realistic: 15 checks with 300 KiB of captured output each (goal <= 0.25 s);
(b) large: 1,000 checks with 100 KiB each (goal <= 2 s). The cost should be linear in
the output size: each line prints MiB/s at the median so a regression shows as a drop.
After its timed runs, each case renders once more under tracemalloc for its peak memory:
the most the render holds at once beyond its inputs, against twice the captured size.
Each case's written files are compared with the digests main gave before the speed work
(tests/data/golden/bench/render-<case>.sha256): a figure for different output is no figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from aicr import ctrf
from aicr.catalog import load_catalog
from aicr.cncf import (
    Conformance,
    SubmissionInputs,
    SubmissionResult,
    check_not_applicable,
    check_vendor,
    load_requirements,
    write_submission,
)
from aicr.config import ValidateConfig, parse_config
from aicr.ctrf import Status, Test
from aicr.recipe.load import parse_recipe
from aicr.recipe.model import Recipe
from aicr.redaction import ENGINE
from aicr.snapshot.load import parse_snapshot
from aicr.snapshot.model import Snapshot

sys.path.insert(0, str(Path(__file__).parent))
import figures  # lives beside this file

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "data" / "golden" / "bench"

CONFIG = """
apiVersion: aicr.nvidia.com/v1alpha1
kind: ValidateConfig
spec:
  validate:
    evidence:
      cncf:
        vendor:
          vendorName: Example Corp
          platformName: Example GPU Cloud
          platformVersion: "1.0"
          websiteUrl: https://example.com
          documentationUrl: https://docs.example.com
          productLogoUrl: https://example.com/logo.svg
          description: A GPU Kubernetes platform.
          contactEmailAddress: conformance@example.com
          k8sConformanceUrl: https://github.com/cncf/k8s-conformance/tree/main/v1.37/example
"""
SNAPSHOT = """
metadata: {source-node: ip-10-0-3-17.us-west-2.compute.internal}
measurements:
  - type: K8s
    subtypes: [{subtype: server, data: {version: v1.37.1}}]
"""
WORDS = ["pod", "scheduled", "ready", "container", "image", "pulled", "gpu", "memory", "MiB",
         "utilisation", "reconciled", "status", "Running", "True", "deployment", "node"]


def output(size: int, rng: random.Random) -> list[str]:
    """About ``size`` bytes of log-like lines with a sprinkling of sensitive values."""
    lines, total, i = [], 0, 0
    while total < size:
        r = rng.random()
        if r < 0.02:
            line = (f"I0714 01:35:{i % 60:02d} node ip-10-0-{i % 250}-{i % 200}.us-west-2"
                    f".compute.internal addr 10.0.{i % 250}.{i % 200} ready")
        elif r < 0.025:
            line = f"GPU {i % 8}: NVIDIA H100 (UUID: GPU-{i:08x}-12ab-34cd-56ef-1234567890ab)"
        else:
            line = " ".join(rng.choice(WORDS) for _ in range(10)) + f" {i} v1.37.1 570.86.16"
        lines.append(line)
        total += len(line) + 1
        i += 1
    return lines


def make_report(checks: int, size: int) -> ctrf.Report:
    rng = random.Random(checks)
    catalog = load_catalog()
    backed = [c.name for c in catalog.checks if c.phase == "conformance"]
    tests = []
    for n in range(checks):
        name = backed[n] if n < len(backed) else f"diag-{n:04d}"
        spec = catalog.get(name)
        labels: dict[str, object] = {"phase": "conformance", "check": name}
        if spec and spec.requirements:
            labels["requirements"] = spec.requirements
        tests.append(Test(name=name, status=Status.PASSED, duration=1000 + n, suite=["conformance"],
                          message="ok", stdout=output(size, rng), labels=labels,
                          extra={"evidence": [{"title": "probe", "asked": "list pods",
                                               "answer": "2 Running"}]}))
    return ctrf.build(tests, start=0, stop=1, version="bench", run_id="bench")


def write_case(root: Path, checks: int, size_kib: int) -> SubmissionResult:
    """Write the case's submission below ``root`` (untimed; the test of unchanged output)."""
    return render(root, *inputs(checks, size_kib))


Inputs = tuple[ctrf.Report, Recipe, ValidateConfig, Snapshot]


def inputs(checks: int, size_kib: int) -> Inputs:
    """The synthetic run of one case: report, recipe, config and snapshot."""
    report = make_report(checks, size_kib * 1024)
    names = [t.name for t in report.tests]
    recipe = parse_recipe(json.dumps({"validation": {"conformance": {"checks": names}}}),
                          "bench-recipe")
    return report, recipe, parse_config(CONFIG, "bench-config"), parse_snapshot(SNAPSHOT, "snap")


def render(root: Path, report: ctrf.Report, recipe: Recipe, config: ValidateConfig,
           snapshot: Snapshot) -> SubmissionResult:
    """Render, redact and verify the submission (what is timed)."""
    conformance = Conformance("1.37", load_requirements("1.37"), "--cncf-version")
    checked = check_vendor(config, "config")
    checked += check_not_applicable(conformance.requirements, config, "config")
    run = SubmissionInputs(report, recipe, snapshot, config, conformance, "bench-recipe",
                           checked=tuple(checked))
    return write_submission(root / "v1.37" / "bench", run, force=False)


def tree_digests(root: Path) -> str:
    """One line per file: the sha256 of its bytes and its path below ``root``."""
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(root).as_posix()}"
             for p in sorted(root.rglob("*")) if p.is_file()]
    return "\n".join(lines) + "\n"


def run(label: str, checks: int, size_kib: int, goal: float, runs: int, update: bool) -> None:
    case = inputs(checks, size_kib)
    mib = checks * size_kib / 1024
    samples, digests, written, redactions = [], "", 0.0, 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            result = render(Path(tmp), *case)
            samples.append(time.perf_counter() - start)
            written = sum(p.stat().st_size for p in result.path.rglob("*") if p.is_file()) / 2**20
            redactions = sum(result.redaction_counts.values())
            digests = tree_digests(result.path)
    golden = GOLDEN / f"render-{label}.sha256"
    if update:
        golden.write_text(digests, encoding="utf-8")
    same = golden.is_file() and golden.read_text(encoding="utf-8") == digests
    output = "as golden" if same else f"DIFFERS from {golden.name}"
    rate = mib / sorted(samples)[len(samples) // 2]
    print(figures.line(f"render {label} {checks}x{size_kib} KiB", samples, goal,
               note=f"{rate:.1f} MiB/s; {mib:.1f} MiB in, {written:.1f} MiB out, "
               f"{redactions} redactions; output {output}"))
    peak = peak_memory(case) / 2**20
    ratio = peak / mib
    print(f"{'  peak memory':34s} {peak:.1f} MiB beyond the inputs, {ratio:.2f}x the captured"
          f" {mib:.1f} MiB  goal <= 2x  {'ok' if ratio <= 2 else 'OVER'}")


def peak_memory(case: Inputs) -> int:
    """Bytes the render holds at its peak beyond its inputs (tracemalloc, an untimed run).

    tracemalloc sees every Python allocation, RE2's and expat's buffers not; it slows
    the run, which is why this run is not one of the timed ones.
    """
    with tempfile.TemporaryDirectory() as tmp:
        tracemalloc.start()
        try:
            render(Path(tmp), *case)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["realistic", "large"])
    parser.add_argument("--runs", type=int, default=0, help="runs per case (default 10 and 3)")
    parser.add_argument("--update-golden", action="store_true",
                        help="record this output as the golden (a reviewed change of output)")
    args = parser.parse_args()
    print(f"regex engine: {ENGINE}")
    if args.only in (None, "realistic"):
        run("realistic", 15, 300, 0.25, args.runs or 10, args.update_golden)
    if args.only in (None, "large"):
        run("large", 1000, 100, 2.0, args.runs or 3, args.update_golden)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
