"""The one place golden outputs are normalised: values that differ on every run by design.

Used by tests/unit/test_golden_outputs.py (every no-cluster output) and
tests/unit/test_bench_outputs.py (the benchmark inputs' outputs).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

# CTRF keys whose value is new on every run: the report's uuid, the run id, wall-clock
# times (ms since the epoch, ISO timestamps) and durations measured from them.
VOLATILE_KEYS = {"reportId", "runId", "timestamp", "start", "stop", "duration"}
# The run id (names.new_run_id: "r" + 8 hex digits), wherever it sits in names and labels.
RUN_ID = re.compile(r"\br[0-9a-f]{8}\b")
# JUnit's wall-clock attributes.
JUNIT_TIMES = re.compile(r'\b(timestamp|time)="[^"]*"')
# The CTRF keys in the report's text forms: YAML (``-t yaml``), the table (``-t table``).
TEXT_KEYS = re.compile(
    r"(?m)^(\s*(?:- )?|summary\.)(" + "|".join(sorted(VOLATILE_KEYS)) + r")(:? +)\S.*$"
)


def normalise(text: str, tmp: Path, root: Path) -> str:
    """``text`` with run ids, times and this machine's paths replaced by placeholders."""
    text = RUN_ID.sub("<run-id>", text)
    text = JUNIT_TIMES.sub(r'\1="<volatile>"', text)
    text = TEXT_KEYS.sub(r"\1\2\3<volatile>", text)
    return text.replace(str(tmp), "<tmp>").replace(str(root), "<root>")


def stable(value: Any) -> Any:
    """A parsed CTRF report with the ``VOLATILE_KEYS`` values replaced."""
    if isinstance(value, dict):
        return {k: "<volatile>" if k in VOLATILE_KEYS else stable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value
