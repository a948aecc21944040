"""dra-support: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from pydantic import Field

from aicr.catalog.params import CheckParams
from aicr.checks.allocation import preflight_mode

preflight = preflight_mode  # the whole-GPU mode, resolved like gpu-allocation-policy does


class Params(CheckParams):
    """``spec.validate.checks.dra-support.params``."""

    probe_seconds: float = Field(
        default=180, gt=0, description="How long the GPU probe pod may take to finish."
    )
