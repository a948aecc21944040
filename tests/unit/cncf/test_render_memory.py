"""Rendering holds the captured output about once: peak memory within twice its size."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from cncf_builders import (
    CONFORMANCE,
    make_config,
    make_recipe,
    make_report,
    make_snapshot,
    make_test,
    render_submission,
)

LINE = "I0714 01:35:08 pod scheduled ready container image pulled gpu memory MiB {i} ok"
SIZE = 256 * 1024  # per check


def test_peak_memory_of_a_render_stays_within_twice_the_captured_output(tmp_path: Path) -> None:
    tests = []
    for n, name in enumerate(CONFORMANCE):
        lines = [LINE.format(i=i) + (f" addr 10.0.{n}.{i % 250}" if i % 50 == 0 else "")
                 for i in range(SIZE // len(LINE))]
        tests.append(make_test(name, stdout=lines))
    report = make_report(tests)
    captured = sum(len(line) + 1 for t in report.tests for line in t.stdout or [])
    recipe, snapshot, config = make_recipe(), make_snapshot(), make_config()
    tracemalloc.start()
    try:
        render_submission(tmp_path / "v1.35" / "x", report=report, recipe=recipe,
                          snapshot=snapshot, config=config, recipe_source="recipe.yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 2 * captured, f"peak {peak / 2**20:.1f} MiB for {captured / 2**20:.1f} MiB"
