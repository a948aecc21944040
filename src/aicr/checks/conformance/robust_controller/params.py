"""robust-controller: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from aicr.catalog.params import CheckParams


class Params(CheckParams):
    """``spec.validate.checks.robust-controller.params``."""

    operator: Literal["kuberay", "dynamo", "trainer"] | None = Field(
        default=None,
        description="The operator to judge (default: the one the recipe deploys; when it "
        "deploys several, the first in recipe order that is up).",
    )
    operator_namespace: str | None = Field(
        default=None,
        min_length=1,
        description="The operator's namespace (default: its recipe component's, else the "
        "release default: ray-system, dynamo-system, kubeflow-system).",
    )
    deployment: str | None = Field(
        default=None,
        min_length=1,
        description="The controller Deployment's name (default: the release's).",
    )
    reconcile_seconds: float = Field(
        default=120,
        gt=0,
        description="How long the valid resource may take to be ready, and its children to "
        "appear, not counting the time its pods spend pulling images.",
    )
    pull_seconds: float = Field(
        default=1200,
        ge=0,
        description="How long the children's image pulls may add to the reconcile bound "
        "(observed from the kubelet's Pulling/Pulled events; multi-GB Ray and Dynamo images "
        "on a cold node take minutes).",
    )
    gc_seconds: float = Field(
        default=60,
        gt=0,
        description="How long its children may take to be garbage-collected after the delete.",
    )
