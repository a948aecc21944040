"""secure-accelerator-access: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from aicr.catalog.params import CheckParams
from aicr.checks.allocation import preflight_mode
from aicr.checks.gpu_operator import runtime_class
from aicr.recipe.model import Recipe


class Params(CheckParams):
    """``spec.validate.checks.secure-accelerator-access.params``."""

    probe_seconds: float = Field(
        default=120, gt=0, description="How long the probe pods may take to start and report."
    )


def preflight(recipe: Recipe, data_dir: str | None, source: str) -> dict[str, Any]:
    """The whole-GPU mode and the GPU RuntimeClass, both from the recipe's values."""
    setting = runtime_class(recipe, data_dir, source)
    rc = None if setting is None else {"name": setting.value, "source": str(setting)}
    return {**preflight_mode(recipe, data_dir, source), "runtimeClass": rc}
