"""cluster-autoscaling: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from pydantic import Field

from aicr.catalog.params import CheckParams


class Params(CheckParams):
    """``spec.validate.checks.cluster-autoscaling.params``."""

    pods: int = Field(default=2, ge=1, le=32, description="GPU pods that no existing node fits.")
    gpus_per_pod: int = Field(default=1, ge=1, description="GPUs each of those pods requests.")
    fill_seconds: float = Field(
        default=120, gt=0, description="How long the pods holding existing nodes' GPUs may take."
    )
    scale_up_seconds: float = Field(
        default=600, gt=0, description="How long a new node and the pods running on it may take."
    )
    scale_down_seconds: float = Field(
        default=300, gt=0, description="How long the new nodes may take to go (or start going)."
    )
