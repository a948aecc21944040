"""Run the cluster suite N times and print how often each test failed.

`make soak N=5` (extra pytest arguments through PYTEST_ARGS, e.g. a single file
or `-k`). Each round writes a JUnit XML file into a scratch folder; the summary
lists every test that failed or errored at least once, with its count, and each
round's duration and totals. A flaky test shows up as a count between 0 and N:
find its cause, never retry it away. Exit 1 when any round had a failure.
"""

from __future__ import annotations

import argparse
import collections
import shlex
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def failed_tests(junit: Path) -> tuple[list[str], int]:
    """Ids of the test cases that failed or errored in one JUnit file, and how many ran."""
    root = ET.parse(junit).getroot()
    bad: list[str] = []
    count = 0
    for case in root.iter("testcase"):
        count += 1
        if case.find("failure") is not None or case.find("error") is not None:
            bad.append(f"{case.get('classname', '')}::{case.get('name', '')}")
    return bad, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", type=int, help="how many times to run the suite")
    parser.add_argument("--pytest-args", default="", help="extra arguments for pytest")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("rounds must be at least 1")
    counts: collections.Counter[str] = collections.Counter()
    any_failed = False
    with tempfile.TemporaryDirectory(prefix="aicr-soak-") as scratch:
        for i in range(1, args.rounds + 1):
            junit = Path(scratch) / f"round-{i}.xml"
            cmd = [sys.executable, "-m", "pytest", "tests/cluster", "-q", "-p", "no:cacheprovider"]
            cmd += [f"--junitxml={junit}", *shlex.split(args.pytest_args)]
            start = time.monotonic()
            rc = subprocess.call(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)
            took = time.monotonic() - start
            if not junit.exists():
                print(f"round {i}: pytest exited {rc} without a report", flush=True)
                any_failed = True
                continue
            bad, ran = failed_tests(junit)
            counts.update(bad)
            any_failed |= bool(bad) or rc != 0
            print(f"round {i}: {ran} tests, {len(bad)} failed, {took / 60:.1f} min", flush=True)
    print(f"\nfailures per test over {args.rounds} rounds:")
    if not counts:
        print("  none")
    for test, n in counts.most_common():
        print(f"  {n}/{args.rounds}  {test}")
    return 1 if any_failed else 0


if __name__ == "__main__":
    sys.exit(main())
