"""workload-sandboxing: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from pydantic import Field

from aicr.catalog.params import CheckParams


class Params(CheckParams):
    """``spec.validate.checks.workload-sandboxing.params``."""

    runtime_classes: list[str] | None = Field(
        default=None,
        min_length=1,
        description="Prove exactly these RuntimeClasses (any handler) instead of those found "
        "by handler.",
    )
    sandbox_handlers: list[str] = Field(
        default_factory=list,
        description="Handlers that count as sandboxed besides runsc and kata*.",
    )
    start_seconds: float = Field(
        default=180, gt=0, description="How long each probe pod may take to finish."
    )
    every_node: bool = Field(
        default=False,
        description="Probe every node a sandboxed RuntimeClass can schedule onto, not one "
        "per node group (node-group label, else instance type).",
    )
