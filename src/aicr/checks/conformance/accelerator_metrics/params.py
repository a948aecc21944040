"""accelerator-metrics: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from pydantic import Field

from aicr.catalog.params import CheckParams
from aicr.checks.allocation import preflight_mode

preflight = preflight_mode  # the whole-GPU mode decides how the load pod gets its GPU


class Params(CheckParams):
    """``spec.validate.checks.accelerator-metrics.params``."""

    exporter_namespace: str | None = Field(
        default=None,
        min_length=1,
        description="Namespace of the exporter pods (default: the recipe's gpu-operator "
        "component's, else every namespace).",
    )
    exporter_selector: str = Field(
        default="app=nvidia-dcgm-exporter",
        min_length=1,
        description="Label selector of the exporter pods.",
    )
    exporter_port: int = Field(default=9400, gt=0, lt=65536, description="The exporter's port.")
    metrics_path: str = Field(default="/metrics", pattern=r"^/", description="The metrics path.")
    scrape_seconds: float = Field(default=10, gt=0, description="Timeout of one HTTP request.")
    load_seconds: int = Field(
        default=60,
        gt=0,
        description="How long the load pod runs at least; longer when the wait for "
        "utilization to rise needs it.",
    )
    collect_seconds: float = Field(
        default=90,
        gt=0,
        description="How long Prometheus may take to have the series and the load pod to "
        "start; the wait for utilization to rise is this beyond two collection intervals "
        "of the exporter.",
    )
    exporter_interval_ms: int | None = Field(
        default=None,
        gt=0,
        description="The exporter's collection interval (ms), used only when its pod spec "
        "does not say it in a readable form (a config file, an env reference): read from "
        "-c/--collect-interval, else DCGM_EXPORTER_INTERVAL, else dcgm-exporter's 30000.",
    )
