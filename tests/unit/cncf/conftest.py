"""Fixtures of the CNCF layer's tests; builders live in cncf_builders.py."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cncf_builders import SNAPSHOT_YAML, config_yaml, recipe_yaml

from aicr import ctrf
from aicr.ctrf import Report


@pytest.fixture
def write_inputs(tmp_path: Path) -> Callable[..., dict[str, Path]]:
    """Write report, recipe, snapshot and config files for CLI tests."""

    def write(report: Report, config: str | None = None, recipe: str | None = None,
              snapshot: str = SNAPSHOT_YAML) -> dict[str, Path]:
        paths = {"report": tmp_path / "report.json", "recipe": tmp_path / "recipe.yaml",
                 "snapshot": tmp_path / "snapshot.yaml", "config": tmp_path / "config.yaml"}
        paths["report"].write_text(ctrf.dumps(report))
        paths["recipe"].write_text(recipe or recipe_yaml())
        paths["snapshot"].write_text(snapshot)
        paths["config"].write_text(config or config_yaml())
        return paths

    return write

