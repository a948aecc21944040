"""ai-service-metrics: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from aicr.catalog.params import CheckParams


class Params(CheckParams):
    """``spec.validate.checks.ai-service-metrics.params``."""

    requests: int = Field(default=10, gt=0, le=1000, description="How many requests to send (N).")
    discovery: Literal["auto", "PodMonitor", "annotations"] = Field(
        default="auto",
        description="How the workload is made discoverable (auto: PodMonitor when the recipe "
        "deploys prometheus-operator or the cluster serves its CRD, else pod annotations).",
    )
    discover_seconds: float = Field(
        default=180, gt=0, description="How long the workload may take to run and be scraped."
    )
    count_seconds: float = Field(
        default=90, gt=0, description="How long Prometheus may take to count the requests."
    )
    http_seconds: float = Field(default=10, gt=0, description="Timeout of one HTTP request.")
