"""Shared test setup: the network guard for every tier, and CTRF schema checks on every report.

Every fixture the tests need lives under tests/ (tests/data). The one corpus
that is not ours to ship, real CNCF submissions, comes from $AICR_CNCF_SUBMISSIONS
(tests/unit/cncf/conftest.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))

import netguard  # noqa: E402  (lives beside this file)

netguard.install()

DATA = TESTS / "data"
CTRF_SCHEMA = DATA / "ctrf" / "ctrf.schema.json"


@pytest.fixture(autouse=True)
def _no_network() -> object:
    yield
    netguard.assert_clean()


def _schema_checked_dumps() -> None:
    """Every CTRF report serialized during the tests is validated against the official schema."""
    import json

    import jsonschema

    from aicr import ctrf

    validator = jsonschema.Draft7Validator(
        json.loads(CTRF_SCHEMA.read_text()), format_checker=jsonschema.FormatChecker()
    )
    original = ctrf.dumps

    def dumps(report: ctrf.Report) -> str:
        text = original(report)
        errors = sorted(validator.iter_errors(json.loads(text)), key=str)
        if errors:
            raise AssertionError(f"report violates the CTRF schema: {errors[0].message}")
        return text

    ctrf.dumps = dumps  # type: ignore[assignment]


_schema_checked_dumps()
