"""The kind workflow's files (hack/kind), shared by its unit and cluster tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import yaml

KIND = Path(__file__).resolve().parents[1] / "hack" / "kind"
EXPECTED: dict[str, dict[str, str]] = yaml.safe_load((KIND / "expected.yaml").read_text())


def _load_check_report() -> Any:
    spec = importlib.util.spec_from_file_location("check_report", KIND / "check_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_report = _load_check_report()
