"""hack/soak.py: the per-test failure counts come from each round's JUnit XML."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("soak", ROOT / "hack" / "soak.py")
assert _spec and _spec.loader
soak = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(soak)

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
  <testcase classname="t.a" name="test_ok" time="1.0"/>
  <testcase classname="t.a" name="test_bad" time="2.0"><failure message="x"/></testcase>
  <testcase classname="t.b" name="test_setup_broke" time="0.1"><error message="y"/></testcase>
  <testcase classname="t.b" name="test_skipped" time="0.0"><skipped message="z"/></testcase>
</testsuite></testsuites>
"""


def test_failures_and_errors_count_skips_do_not(tmp_path: Path) -> None:
    junit = tmp_path / "round.xml"
    junit.write_text(JUNIT)
    bad, ran = soak.failed_tests(junit)
    assert bad == ["t.a::test_bad", "t.b::test_setup_broke"]
    assert ran == 4
