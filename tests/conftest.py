"""Shared test setup: the network guard for every tier, and paths to shared fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))

import netguard  # noqa: E402  (lives beside this file)

netguard.install()

REPO = TESTS.parent
# CI clones main into another folder with a copy of shared/ beside it, as here.
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "fixtures"
DATA = TESTS / "data"


@pytest.fixture(autouse=True)
def _no_network() -> object:
    yield
    netguard.assert_clean()


@pytest.fixture
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.fail(f"shared fixtures not found at {FIXTURES} (expected beside the repo)")
    return FIXTURES


@pytest.fixture
def aks_recipe_path(fixtures_dir: Path) -> Path:
    return fixtures_dir / "aicr/examples/aks-training.yaml"


@pytest.fixture
def mock_snapshot_path(fixtures_dir: Path) -> Path:
    return fixtures_dir / "aicr/mock-snapshot.yaml"


def _schema_checked_dumps() -> None:
    """Every CTRF report serialized during the tests is validated against the official schema."""
    import json

    import jsonschema

    from aicr import ctrf

    schema_path = FIXTURES / "ctrf/ctrf.schema.json"
    if not schema_path.is_file():
        return
    validator = jsonschema.Draft7Validator(
        json.loads(schema_path.read_text()), format_checker=jsonschema.FormatChecker()
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
