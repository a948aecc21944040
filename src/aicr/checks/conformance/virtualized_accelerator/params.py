"""virtualized-accelerator: its params, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from pydantic import Field

from aicr.catalog.params import CheckParams


class Params(CheckParams):
    """``spec.validate.checks.virtualized-accelerator.params``."""

    probe_seconds: float = Field(
        default=120, gt=0, description="How long each probe pod may take to run and report."
    )
