"""pod-autoscaling: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from aicr.catalog.params import CheckParams
from aicr.checks.allocation import preflight_mode
from aicr.recipe.model import Recipe


class Params(CheckParams):
    """``spec.validate.checks.pod-autoscaling.params``."""

    metric: str = Field(
        default="aicr_autoscaling_load",
        pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$",
        description="The gauge the pods serve and the HPA scales on; the custom metrics API "
        "must serve it per pod under this name.",
    )
    start_seconds: float = Field(default=120, gt=0, description="How long the first pod may take.")
    metric_seconds: float = Field(
        default=90, gt=0, description="How long the HPA may take to read the metric at all."
    )
    scale_up_seconds: float = Field(
        default=90,
        gt=0,
        description="After the metric is raised: how long until the new pod runs on a GPU node.",
    )
    stabilization_seconds: int = Field(
        default=15,
        ge=0,
        le=3600,
        description="The HPA's behavior.scaleDown.stabilizationWindowSeconds.",
    )
    scale_down_seconds: float = Field(
        default=60,
        gt=0,
        description="After the metric is lowered: how long beyond the window scale-down may take.",
    )


def preflight(recipe: Recipe, data_dir: str | None, source: str) -> dict[str, Any]:
    """The whole-GPU mode (device plugin or DRA) from the recipe's values."""
    return preflight_mode(recipe, data_dir, source)
