"""pod-autoscaling: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from aicr.catalog.params import CheckParams
from aicr.checks.allocation import preflight_mode
from aicr.recipe.model import Recipe

METRIC_NAME = r"^[a-zA-Z_:][a-zA-Z0-9_:]*$"
# What the custom metrics API (prometheus-adapter with the values AICR's recipes
# reference) serves per pod from DCGM_FI_DEV_GPU_UTIL: workload_gpu_utilization through
# the exporter's exported_namespace/exported_pod labels (Prometheus renames them so
# when the scrape does not honour the target's labels, the GPU Operator
# ServiceMonitor's default), gpu_utilization through namespace/pod (when it does).
METRICS = ("workload_gpu_utilization", "gpu_utilization")


class Params(CheckParams):
    """``spec.validate.checks.pod-autoscaling.params``."""

    metrics: list[Annotated[str, Field(pattern=METRIC_NAME)]] = Field(
        default=list(METRICS),
        min_length=1,
        description="Per-pod GPU utilization metrics (%) to scale on, in order of preference: "
        "the first the custom metrics API serves for the check's pod is used.",
    )
    start_seconds: float = Field(default=120, gt=0, description="How long the first pod may take.")
    metric_seconds: float | None = Field(
        default=None,
        gt=0,
        description="How long the loaded pod's metric may take to reach the HPA, from the "
        "pod's start (default: derived from the cluster: the DCGM exporter's collection "
        "interval, the scrape interval, prometheus-adapter's relist interval and the HPA "
        "sync period, each read where the cluster states it, else its documented default, "
        "plus a 30 s margin).",
    )
    load_seconds: int = Field(
        default=420,
        gt=0,
        le=3600,
        description="How long the pods load their GPUs at most, from the Deployment's "
        "creation; the first pod's start, the metric's reading and the scale-up must fit in "
        "it. The check ends the load as soon as it has seen the scale-up.",
    )
    scale_up_seconds: float = Field(
        default=120,
        gt=0,
        description="After the HPA reads the loaded metric: how long until the new pod runs "
        "on a GPU node.",
    )
    stabilization_seconds: int = Field(
        default=15,
        ge=0,
        le=3600,
        description="The HPA's behavior.scaleDown.stabilizationWindowSeconds.",
    )
    scale_down_seconds: float = Field(
        default=120,
        gt=0,
        description="After the check ends the load: how long beyond the kubelet's volume "
        "sync (60 s, when the pods see the end) and the stabilization window scale-down may "
        "take.",
    )


def preflight(recipe: Recipe, data_dir: str | None, source: str) -> dict[str, Any]:
    """The whole-GPU mode (device plugin or DRA) from the recipe's values."""
    return preflight_mode(recipe, data_dir, source)
