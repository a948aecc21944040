"""Benchmark: render, redact and verify a CNCF submission from a synthetic run.

    .venv/bin/python bench/cncf_render.py [--only realistic|large]

(a) realistic: 15 checks with 300 KiB of captured output each (target <= 1 s);
(b) large: 1,000 checks with 100 KiB each (target <= 15 s). The cost should be linear
in the output size; the figures print MB/s so a regression shows as a drop.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from aicr import ctrf
from aicr.catalog import load_catalog
from aicr.cncf import write_submission
from aicr.config import parse_config
from aicr.ctrf import Status, Test
from aicr.recipe.load import parse_recipe
from aicr.redaction import ENGINE
from aicr.snapshot.load import parse_snapshot

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


def run(label: str, checks: int, size_kib: int, target: float) -> bool:
    report = make_report(checks, size_kib * 1024)
    names = [t.name for t in report.tests]
    recipe = parse_recipe(json.dumps({"validation": {"conformance": {"checks": names}}}),
                          "bench-recipe")
    config, snapshot = parse_config(CONFIG, "bench-config"), parse_snapshot(SNAPSHOT, "snap")
    mb = checks * size_kib / 1024
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = write_submission(Path(tmp) / "v1.37" / "bench", report=report, recipe=recipe,
                                  snapshot=snapshot, config=config, version="1.37", force=False,
                                  recipe_source="bench-recipe")
        elapsed = time.perf_counter() - start
        written = sum(p.stat().st_size for p in result.path.rglob("*") if p.is_file()) / 2**20
    ok = elapsed <= target
    print(f"{label:10} {checks:5} checks x {size_kib:3} KiB = {mb:7.1f} MiB captured, "
          f"{written:7.1f} MiB written, {sum(result.redaction_counts.values()):8} redactions: "
          f"{elapsed:6.2f} s ({mb / elapsed:6.1f} MiB/s) target {target:.0f} s "
          f"{'OK' if ok else 'MISSED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["realistic", "large"])
    args = parser.parse_args()
    print(f"regex engine: {ENGINE}")
    ok = True
    if args.only in (None, "realistic"):
        ok &= run("realistic", 15, 300, 1.0)
    if args.only in (None, "large"):
        ok &= run("large", 1000, 100, 15.0)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
