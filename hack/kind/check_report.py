"""Compare a CTRF report of the kind workflow with hack/kind/expected.yaml.

    python hack/kind/check_report.py report.json hack/kind/expected.yaml

Prints one line per check and exits 1 when any check is missing, unexpected,
or reports another status (or, where the file fixes one, another message).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml


def compare(report: dict[str, Any], expected: dict[str, dict[str, str]]) -> list[str]:
    """Every difference between the report's tests and the expected verdicts."""
    got = {t["name"]: t for t in report["results"]["tests"]}
    problems = [f"{name}: not in the report" for name in expected if name not in got]
    problems += [f"{name}: in the report but not expected" for name in got if name not in expected]
    for name, want in expected.items():
        test = got.get(name)
        if test is None:
            continue
        if test["status"] != want["status"]:
            problems.append(f"{name}: {test['status']} ({test.get('message', '')}), "
                            f"expected {want['status']}")
        elif "message" in want and test.get("message") != want["message"]:
            problems.append(
                f"{name}: message {test.get('message')!r}, expected {want['message']!r}"
            )
    return problems


def main(argv: list[str]) -> int:
    report = json.loads(Path(argv[0]).read_text())
    expected = yaml.safe_load(Path(argv[1]).read_text())
    for test in report["results"]["tests"]:
        print(f"{test['name']}: {test['status']}: {test.get('message', '')}")
    problems = compare(report, expected)
    for line in problems:
        print(f"MISMATCH {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
