"""``aicr.__version__`` is the version pyproject.toml declares and pip installed."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import aicr

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_installed_one() -> None:
    assert aicr.version() == aicr.__version__ == importlib.metadata.version("aicr")


def test_version_is_pyprojects() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert aicr.__version__ == project["version"]
