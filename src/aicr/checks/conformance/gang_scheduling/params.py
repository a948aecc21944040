"""gang-scheduling: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from aicr.catalog.params import CheckParams
from aicr.checks.allocation import preflight_mode

preflight = preflight_mode  # GPU members need the whole-GPU mode (device plugin or DRA)


class Params(CheckParams):
    """``spec.validate.checks.gang-scheduling.params``."""

    size: int = Field(default=2, ge=2, le=16, description="Pods in the gang that must start.")
    observe_seconds: float = Field(
        default=30, gt=0, description="How long the gang that cannot fit is watched."
    )
    start_seconds: float = Field(
        default=120, gt=0, description="How long the gang that fits may take to run."
    )
    admission_seconds: float = Field(
        default=30,
        gt=0,
        description="How long, after the window, its admission object may take to show it waiting.",
    )
    mechanism: Literal["kai", "kueue", "coscheduling", "volcano"] | None = Field(
        default=None, description="The gang mechanism to test when the cluster serves several."
    )
    scheduler_name: str | None = Field(
        default=None,
        min_length=1,
        description="The schedulerName of PodGroup gangs (default: the mechanism's own).",
    )
    queue: str | None = Field(
        default=None,
        min_length=1,
        description="KAI or Volcano queue the gangs join (default-queue / default).",
    )

    def workload_pod_security(self) -> str | None:
        """Restricted, though the check takes GPUs: every member is a non-root ``sleep``."""
        return "restricted"
