"""gpu-allocation-policy: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from typing import Any

from aicr.checks.allocation import resolve_mode
from aicr.recipe.model import Recipe


def preflight(recipe: Recipe, data_dir: str | None, source: str) -> dict[str, Any]:
    """Resolve the mode in the orchestrator (exit 2 on a contradictory recipe)."""
    return resolve_mode(recipe, data_dir, source).as_json()
